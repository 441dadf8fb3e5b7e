package matrix

import (
	"strings"
	"time"
)

// IsBatchFolder reports whether name, a folder in .agent/tasks/, groups work
// by date (260116_bug_fixes, 2026-01-16_fixes, 20260116_fixes) instead of
// being a task's folder: its prefix up to the first '_' looks like a date and
// no row has an ID that the name starts with (followed by '_'). hasRow
// answers whether a row has the given ID. 260116 is also a valid ID, so the
// rows decide: with a row 260116, 260116_bug_fixes is that task's folder.
func IsBatchFolder(name string, hasRow func(id string) bool) bool {
	prefix, _, ok := strings.Cut(name, "_")
	if !ok || !looksLikeDate(prefix) {
		return false
	}
	for i := range len(name) {
		if name[i] == '_' && hasRow(name[:i]) {
			return false
		}
	}
	return true
}

// looksLikeDate accepts YYMMDD, YYYYMMDD and YYYY-MM-DD naming a real day.
func looksLikeDate(s string) bool {
	for _, layout := range []string{"060102", "20060102", "2006-01-02"} {
		if len(s) == len(layout) && allDigitsOrDash(s) {
			if _, err := time.Parse(layout, s); err == nil {
				return true
			}
		}
	}
	return false
}

func allDigitsOrDash(s string) bool {
	return strings.Trim(s, "0123456789-") == ""
}
