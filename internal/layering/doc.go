// Package layering holds the tests of the repository's import rules (see
// layering_test.go) and of its event kinds' readers (events_test.go); it
// has no code of its own.
package layering
