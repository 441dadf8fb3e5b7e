package policy

import (
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Action is something an agent wants to do.
type Action struct {
	Kind    string // command, edit, read, fetch, tool
	Tool    string
	Command string
	File    string // absolute, or relative to the workspace root
	URL     string
}

// Action kinds.
const (
	KindCommand = "command"
	KindEdit    = "edit"
	KindRead    = "read"
	KindFetch   = "fetch"
	KindTool    = "tool"
)

// Assessment is an action's risk and why.
type Assessment struct {
	Risk string
	Why  []string
}

func (a *Assessment) raise(risk, why string) {
	if !RiskAtMost(risk, a.Risk) {
		a.Risk = risk
	}
	a.Why = append(a.Why, why)
}

// network commands: they reach outside the machine.
var networkCommands = []string{"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "telnet", "ftp", "http", "httpie"}

// Assess grades an action: critical (force pushes, recursive deletes
// outside the workspace, writes to secrets, sudo, network piped into a
// shell, an agent editing its own policy), high (recursive deletes, network,
// writes outside the workspace, reading secrets, anything a shell must
// expand), else low.
func Assess(root string, a Action) Assessment {
	as := Assessment{Risk: RiskLow}
	switch a.Kind {
	case KindCommand:
		assessCommand(root, a.Command, &as)
	case KindEdit:
		assessFile(root, a.File, true, &as)
	case KindRead:
		assessFile(root, a.File, false, &as)
	case KindFetch:
		as.raise(RiskHigh, "network: fetches "+hostOf(a.URL))
	}
	return as
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

func assessCommand(root, line string, as *Assessment) {
	p := parseCommand(line)
	if p.Dynamic {
		as.raise(RiskHigh, "the command has parts only a shell can expand")
	}
	fetchThenShell := false
	for i, c := range p.Cmds {
		name := path.Base(c.Args[0])
		args := c.Args[1:]
		if name == "sudo" || name == "su" || name == "doas" {
			as.raise(RiskCritical, "runs as another user ("+name+")")
		}
		if slices.Contains(networkCommands, name) {
			as.raise(RiskHigh, "network: "+name)
			fetchThenShell = fetchThenShell || name == "curl" || name == "wget"
		}
		if fetchThenShell && i > 0 && slices.Contains([]string{"sh", "bash", "zsh", "python", "python3", "node"}, name) {
			as.raise(RiskCritical, "downloads and runs code")
		}
		switch name {
		case "rm":
			if hasFlag(args, "r", "recursive") {
				as.raise(RiskHigh, "rm -r")
				for _, t := range operands(args) {
					if t == "/" || t == "~" || t == "*" || !inside(root, t) {
						as.raise(RiskCritical, "rm -r of "+t+" (outside the workspace)")
					}
				}
			}
		case "git":
			sub := firstOperand(args)
			if sub == "push" {
				as.raise(RiskHigh, "network: git push")
				if hasFlag(args, "f", "force") || slices.ContainsFunc(args, func(s string) bool {
					return strings.HasPrefix(s, "--force") || strings.HasPrefix(s, "+")
				}) {
					as.raise(RiskCritical, "force push")
				}
			}
			if sub == "fetch" || sub == "pull" || sub == "clone" {
				as.raise(RiskHigh, "network: git "+sub)
			}
		case "npm", "pnpm", "yarn", "pip", "pip3", "go", "cargo", "gem":
			if s := firstOperand(args); s == "install" || s == "add" || s == "publish" || s == "get" {
				as.raise(RiskHigh, "network: "+name+" "+s)
			}
		case "dd", "mkfs", "shutdown", "reboot":
			as.raise(RiskCritical, name)
		case "chmod", "chown":
			for _, t := range operands(args) {
				if !inside(root, t) {
					as.raise(RiskHigh, name+" outside the workspace")
				}
			}
		}
		for _, t := range operands(args) {
			if secret(t) {
				as.raise(RiskHigh, "touches a secrets path: "+t)
			}
		}
		for _, r := range c.Redirects {
			if r != "" {
				assessFile(root, r, true, as)
			}
		}
	}
}

func hasFlag(args []string, short, long string) bool {
	for _, a := range args {
		if a == "--"+long {
			return true
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], short+strings.ToUpper(short)) {
			return true
		}
	}
	return false
}

func operands(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

func firstOperand(args []string) string {
	if ops := operands(args); len(ops) > 0 {
		return ops[0]
	}
	return ""
}

// inside reports whether p (absolute, or relative to root) stays inside root.
func inside(root, p string) bool {
	if strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$") {
		return false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	rel, err := filepath.Rel(root, filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Rel is p relative to root in slash form ("" when outside).
func Rel(root, p string) string {
	if !inside(root, p) {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	rel, _ := filepath.Rel(root, filepath.Clean(p))
	return filepath.ToSlash(rel)
}

var secretNames = []string{".env", ".netrc", ".npmrc", ".pypirc", "credentials", "id_rsa", "id_ed25519", "id_ecdsa", ".git-credentials"}
var secretDirs = []string{".ssh", ".aws", ".gnupg", ".docker", ".kube"}
var secretExts = []string{".pem", ".key", ".p12", ".pfx"}

func secret(p string) bool {
	p = filepath.ToSlash(p)
	base := path.Base(p)
	if slices.Contains(secretNames, base) || strings.HasPrefix(base, ".env.") || slices.Contains(secretExts, path.Ext(base)) {
		return true
	}
	for _, d := range secretDirs {
		if strings.Contains("/"+p+"/", "/"+d+"/") {
			return true
		}
	}
	return false
}

func assessFile(root, p string, write bool, as *Assessment) {
	if p == "" {
		return
	}
	switch {
	case write && secret(p):
		as.raise(RiskCritical, "writes a secrets path: "+p)
	case secret(p):
		as.raise(RiskHigh, "reads a secrets path: "+p)
	}
	if write && !inside(root, p) {
		as.raise(RiskHigh, "writes outside the workspace: "+p)
	}
	if rel := Rel(root, p); write && (rel == ".agent/"+FileName || rel == ".git" || strings.HasPrefix(rel, ".git/")) {
		as.raise(RiskCritical, "edits "+rel+" (the policy or git's own files)")
	}
}
