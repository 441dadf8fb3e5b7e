package runner

import (
	"fmt"
	"strings"
)

// Redacted replaces secret values in records.
const Redacted = "[REDACTED]"

// secretName reports whether an environment variable or config key names a
// secret: its name contains KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or
// AUTH (case-insensitive).
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactEnv returns KEY=VALUE entries with the values of secret-named keys
// replaced by [REDACTED].
func RedactEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && v != "" && secretName(k) {
			kv = k + "=" + Redacted
		}
		out = append(out, kv)
	}
	return out
}

// RedactArgv returns a copy of argv fit for a record: the prompt element
// (index promptArg, -1 for none) becomes a size placeholder (the prompt is
// recorded in full elsewhere), key=value arguments with a secret-named key and
// the value after a secret-named flag (--api-key X) are [REDACTED].
func RedactArgv(argv []string, promptArg int) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case i == promptArg:
			if flag, _, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--prompt=") {
				out[i] = flag + "=" + fmt.Sprintf("{prompt: %d bytes}", len(a)-len(flag)-1)
			} else {
				out[i] = fmt.Sprintf("{prompt: %d bytes}", len(a))
			}
		case i > 0 && strings.HasPrefix(argv[i-1], "-") && !strings.Contains(argv[i-1], "=") &&
			secretName(strings.TrimLeft(argv[i-1], "-")) && i-1 != promptArg:
			out[i] = Redacted
		default:
			if k, v, ok := strings.Cut(a, "="); ok && v != "" && secretName(strings.TrimLeft(k, "-")) {
				a = k + "=" + Redacted
			}
			out[i] = a
		}
	}
	return out
}

// secretValues returns the values of secret-named entries of env that are long
// enough to be recognised in output (short values would redact ordinary text).
func secretValues(env []string) []string {
	var out []string
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && len(v) >= 8 && secretName(k) {
			out = append(out, v)
		}
	}
	return out
}

// scrub replaces every occurrence of the given secret values in s.
func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

// DisplayArgv renders argv for people, quoting elements a shell would split.
// It is never executed.
func DisplayArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
