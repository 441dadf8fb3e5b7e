package coder

// MaxWorkspaceNameLen is the longest name Coder accepts for a workspace.
const MaxWorkspaceNameLen = 32

// ValidateWorkspaceName checks name with Coder's own rule for workspace
// names (codersdk.NameValid, the "workspace_name" validator): 1–32 ASCII
// letters and digits in groups joined by single hyphens (no leading,
// trailing or double hyphen), and neither "new" nor "create", which would
// collide with routes. Coder accepts upper case ("Henk" is a real
// workspace) and compares names case-insensitively per owner.
func ValidateWorkspaceName(name string) error {
	const rule = "use 1–32 letters and digits with single hyphens between them (e.g. papi, web-2)"
	if name == "" {
		return invalid("name", "the workspace name is empty: %s", rule)
	}
	if len(name) > MaxWorkspaceNameLen {
		return invalid("name", "workspace name %q is %d characters long: %s", name, len(name), rule)
	}
	if name == "new" || name == "create" {
		return invalid("name", "workspace name %q is reserved by Coder: choose another", name)
	}
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 || name[i-1] == '-' {
				return invalid("name", "workspace name %q has a leading, trailing or double hyphen: %s", name, rule)
			}
		default:
			return invalid("name", "workspace name %q contains %q: %s", name, c, rule)
		}
	}
	return nil
}
