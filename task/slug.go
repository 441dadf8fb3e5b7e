package task

import (
	"strings"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/matrix"
	"github.com/agentinfra/agentinfra/workspace"
)

// MaxSlugLen bounds the slug Slugify makes.
const MaxSlugLen = 40

// fold maps common accented Latin letters to ASCII.
var fold = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'ā': "a", 'ą': "a", 'æ': "ae",
	'ç': "c", 'ć': "c", 'č': "c", 'ď': "d", 'đ': "d", 'ð': "d",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ē': "e", 'ę': "e", 'ě': "e",
	'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ī': "i", 'ı': "i",
	'ł': "l", 'ñ': "n", 'ń': "n", 'ň': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'ō': "o", 'ő': "o", 'œ': "oe",
	'ř': "r", 'ś': "s", 'š': "s", 'ş': "s", 'ß': "ss", 'ť': "t", 'þ': "th",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ū': "u", 'ů': "u", 'ű': "u",
	'ý': "y", 'ÿ': "y", 'ź': "z", 'ż': "z", 'ž': "z",
}

// Slugify makes a task folder slug from a description: lowercase ASCII
// letters and digits joined by single underscores, at most MaxSlugLen
// characters (cut at a word boundary when one is near), "task" when nothing is left.
func Slugify(desc string) string {
	desc = taskTitle(desc) // a Description over several lines: its first line
	var b strings.Builder
	pendingSep := false
	for _, r := range strings.ToLower(desc) {
		var s string
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			s = string(r)
		case fold[r] != "":
			s = fold[r]
		default:
			pendingSep = b.Len() > 0
			continue
		}
		if pendingSep {
			b.WriteByte('_')
			pendingSep = false
		}
		b.WriteString(s)
	}
	slug := b.String()
	if len(slug) > MaxSlugLen {
		cut := slug[:MaxSlugLen]
		if i := strings.LastIndexByte(cut, '_'); i >= MaxSlugLen/2 {
			cut = cut[:i]
		}
		slug = strings.TrimRight(cut, "_")
	}
	if slug == "" {
		return "task"
	}
	return slug
}

// ValidateSlug checks a slug given by a user: one path element with no '/',
// no "..", no leading dot, made of letters, digits, '-', '_' and '.'.
func ValidateSlug(s string) error {
	if err := workspace.ValidSlug(s); err != nil {
		return &agenterr.Error{Kind: agenterr.Invalid, Field: "slug", Value: s, Reason: err.Error() + "; use letters, digits, '-', '_' (or give none to derive one from the description)"}
	}
	if !matrix.ValidName(s) {
		return &agenterr.Error{Kind: agenterr.Invalid, Field: "slug", Value: s, Reason: "may hold only letters, digits, '-', '_' and '.', starting with a letter or digit"}
	}
	if len(s) > 100 {
		return &agenterr.Error{Kind: agenterr.Invalid, Field: "slug", Value: s, Reason: "longer than 100 characters"}
	}
	return nil
}
