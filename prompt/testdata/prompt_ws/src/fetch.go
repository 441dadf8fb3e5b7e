package src

// Fetch has a doc comment with a ```` fence ```` inside.
func Fetch() error { return nil }
