//go:build race

package matrix

// raceEnabled: the race detector makes every process several times slower
// to start, so the process tests kill fewer of them in their time budget.
const raceEnabled = true
