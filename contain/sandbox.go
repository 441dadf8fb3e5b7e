package contain

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// EnvSandbox carries a run's sandbox from the code that knows the run (its
// CLI and workspace: Sandbox.Env) to the one place an agent CLI is started
// (Setup), and from there to the trampoline, which removes it before the
// CLI runs.
const EnvSandbox = "AGENTINFRA_SANDBOX"

// Sandbox is what an agent CLI and everything it starts may do with the
// filesystem (Linux, Landlock): write only in the folder it runs in, the
// temporary folders and the folders its CLI keeps its own state in; not
// see the workspace's supervision database (.agent/state/) nor the user's
// agentinfra config folder (the allowlist, the token files). The agent CLI
// is started through a trampoline — this program, executed again — that
// applies the rules to itself and then executes the CLI, so that nothing
// stands between agentinfra and the CLI but its own code (no shell).
type Sandbox struct {
	// CLI is the agent CLI (claude, codex, gemini): the folders it writes
	// besides the run's.
	CLI string `json:"cli,omitempty"`
	// Workspace is the workspace root whose .agent/state is hidden.
	Workspace string `json:"workspace,omitempty"`

	// Filled by Setup, read by the trampoline.

	// Exe is the program the trampoline executes.
	Exe string `json:"exe,omitempty"`
	// Write lists the files and folders the processes may write below.
	Write []string `json:"write,omitempty"`
	// Hide lists the folders the processes may neither read nor write.
	Hide []string `json:"hide,omitempty"`
	// Mount says the trampoline runs in a mount namespace of its own and
	// covers each Hide folder with an empty read-only one (how a folder
	// inside a writable one is hidden: Landlock only grants whole trees).
	Mount bool `json:"mount,omitempty"`
}

// Env is the entry that asks Setup to start the CLI in the sandbox.
func (s Sandbox) Env() string {
	b, _ := json.Marshal(s) // a struct of strings always encodes
	return EnvSandbox + "=" + string(b)
}

// fromEnv finds the sandbox entry in env: the sandbox, env without the
// entry, and whether there was one.
func fromEnv(env []string) (Sandbox, []string, bool) {
	var s Sandbox
	found := false
	out := env[:0:0]
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, EnvSandbox+"="); ok {
			found = json.Unmarshal([]byte(v), &s) == nil
			continue
		}
		out = append(out, kv)
	}
	return s, out, found
}

// setEnv gives cmd its environment (ChildEnv of adds less the sandbox
// entry) and returns the sandbox adds asked for.
func setEnv(cmd *exec.Cmd, clean bool, adds [][]string) (Sandbox, bool) {
	s, all, boxed := fromEnv(slices.Concat(adds...))
	cli := s.CLI
	if cli == "" {
		cli = filepath.Base(cmd.Path) // the CLIs are found by their names
	}
	cmd.Env = ChildEnv(cli, clean, all)
	return s, boxed
}

// cliState lists, per CLI, the folders (and files) under its home it
// writes to run, found by tracing each pinned CLI's file system calls
// (docs/supervision.md, "Containment"); getenv is the CLI's environment.
func cliState(cli string, getenv func(string) string) []string {
	home := getenv("HOME")
	or := func(v, def string) string {
		if v != "" {
			return v
		}
		return def
	}
	switch cli {
	case "claude":
		// $CLAUDE_CONFIG_DIR holds .claude.json too; without it claude
		// keeps ~/.claude/ and ~/.claude.json (rewritten through a temporary
		// file in ~: not possible here, claude goes on without it).
		return []string{or(getenv("CLAUDE_CONFIG_DIR"), join(home, ".claude")), join(home, ".claude.json")}
	case "codex":
		return []string{or(getenv("CODEX_HOME"), join(home, ".codex"))}
	case "gemini":
		return []string{join(or(getenv("GEMINI_CLI_HOME"), home), ".gemini")}
	}
	return nil
}

// gitShared lists what git writes outside dir when dir is a linked
// worktree (a fleet agent's): the worktree's own folder in the main
// repository's .git (its HEAD, index, logs) and the shared objects, refs
// and reflogs — what a commit needs — but not the rest of that .git (its
// config, its hooks: what would run in the person's repository).
func gitShared(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return nil // no .git, or a folder: the repository is dir's own
	}
	own, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return nil
	}
	if !filepath.IsAbs(own) {
		own = filepath.Join(dir, own)
	}
	common := own
	if c, err := os.ReadFile(filepath.Join(own, "commondir")); err == nil {
		if common = strings.TrimSpace(string(c)); !filepath.IsAbs(common) {
			common = filepath.Join(own, common)
		}
	}
	return []string{own, filepath.Join(common, "objects"), filepath.Join(common, "refs"), filepath.Join(common, "logs")}
}

// caches are the folders under home that the tools an agent runs write
// (node's npm, Go's build and module caches, the XDG cache).
func caches(getenv func(string) string) []string {
	home := getenv("HOME")
	out := []string{join(home, ".npm"), join(home, ".cache")}
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		out = append(out, d)
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE"} {
		if d := getenv(k); filepath.IsAbs(d) {
			out = append(out, d)
		}
	}
	gopath := getenv("GOPATH")
	if gopath == "" && home != "" {
		gopath = filepath.Join(home, "go")
	}
	for _, p := range filepath.SplitList(gopath) {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Join(p, "pkg", "mod"))
		}
	}
	return out
}

// temps are the temporary folders.
func temps(getenv func(string) string) []string {
	out := []string{"/tmp", "/var/tmp", "/dev/shm"}
	if d := getenv("TMPDIR"); filepath.IsAbs(d) {
		out = append(out, d)
	}
	return out
}

// UserConfigDir is the folder of the user's agentinfra config, where the
// policy reads the allowlist: $AGENTINFRA_CONFIG_DIR, else
// $XDG_CONFIG_HOME/agentinfra, else ~/.config/agentinfra ("" when getenv
// knows none of them).
func UserConfigDir(getenv func(string) string) string {
	if d := getenv("AGENTINFRA_CONFIG_DIR"); d != "" {
		return d
	}
	if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "agentinfra")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "agentinfra")
	}
	return ""
}

// userConfigDirs are the folders that may hold the user's agentinfra
// config (the allowlist, the MCP and console token files, which ignore
// $AGENTINFRA_CONFIG_DIR): every place agentinfra looks, in each
// environment given.
func userConfigDirs(getenvs ...func(string) string) []string {
	var out []string
	for _, getenv := range getenvs {
		out = append(out, UserConfigDir(getenv))
		if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
			out = append(out, filepath.Join(d, "agentinfra"))
		}
		if h := getenv("HOME"); h != "" {
			out = append(out, filepath.Join(h, ".config", "agentinfra"))
		}
	}
	return cleanPaths(out)
}

// plan fills the sandbox's Write and Hide for a CLI started in dir with
// env (the child's) by this process (whose environment also says where the
// user's config is).
func (s *Sandbox) plan(dir string, env []string) {
	getenv := lookup(env)
	if dir == "" {
		dir, _ = os.Getwd()
	}
	w := append([]string{dir}, temps(getenv)...)
	w = append(w, gitShared(dir)...)
	w = append(w, cliState(s.CLI, getenv)...)
	s.Write = cleanPaths(append(w, caches(getenv)...))
	var hide []string
	if s.Workspace != "" {
		hide = append(hide, filepath.Join(s.Workspace, ".agent", "state"))
	}
	s.Hide = cleanPaths(append(hide, userConfigDirs(os.Getenv, getenv)...))
	// Landlock grants whole trees: a folder to hide below one the CLI may
	// write (the workspace's state when the run is in the workspace itself,
	// a config or workspace in /tmp) is covered by an empty one instead.
	for _, h := range s.Hide {
		for _, w := range s.Write {
			if within(h, w) {
				s.Mount = true
			}
		}
	}
}

// lookup reads KEY from env (the last entry wins, as for exec).
func lookup(env []string) func(string) string {
	return func(key string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], key+"="); ok {
				return v
			}
		}
		return ""
	}
}

// join is filepath.Join, "" when base is unknown.
func join(base, name string) string {
	if base == "" {
		return ""
	}
	return filepath.Join(base, name)
}

// cleanPaths keeps the absolute paths, cleaned, with symlinks resolved
// where they exist (Landlock and mounts act on what a path leads to), once
// each, sorted.
func cleanPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// Warning is what a run in this sandbox, in dir, should say once as it
// starts: "" when the machine contains it fully; else what it cannot do
// (no Landlock; no mount namespace to hide a folder inside dir).
func (s Sandbox) Warning(dir string, env []string) string {
	sup := Supported()
	if sup.ABI == 0 {
		return "the agent's processes are not contained: " + sup.Why + "; they may write anywhere you may and read the supervision database (agentinfra doctor)"
	}
	s.plan(dir, ChildEnv(s.CLI, false, env))
	if !s.Mount || sup.Mount {
		return ""
	}
	var inside []string
	for _, h := range s.Hide {
		if slices.ContainsFunc(s.Write, func(w string) bool { return within(h, w) }) {
			inside = append(inside, h)
		}
	}
	return fmt.Sprintf("no mount namespace here (user namespaces are disabled or denied): %s stay hidden from the agent by Landlock alone, so it cannot create entries in the folders that lead there (agentinfra doctor)",
		strings.Join(inside, ", "))
}
