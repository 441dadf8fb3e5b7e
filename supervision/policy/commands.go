package policy

import (
	"errors"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// commandForm is one row of the command table: a form of command and the
// risk it is graded. The table (commandForms) is the one place these forms
// are listed; docs/supervision.md shows it ("Commands that run code"), and
// a test checks that every row there is graded as it says.
type commandForm struct {
	// Form is the row's name, as the docs' table writes it.
	Form string
	// Example is a command line of the form (the docs show it, the tests
	// grade it).
	Example string
	Risk    string
	// call tests one program a line runs; line tests the whole line. Each
	// returns "" when the form does not apply, else the reason a person
	// reads.
	call func(g *grader, c *call) string
	line func(g *grader) string
}

// call is one program a command line runs, as the grader sees it.
type call struct {
	prog string   // the program as written ("" when only the shell knows it)
	name string   // its base name
	args []string // its literal words after the program ("" for a word only the shell knows)
	// opaque: a word of it is only known to the shell (a variable, a glob).
	opaque bool
	// guesses are its opaque words with $HOME filled in: the path rules
	// judge them too (cat $HOME/.config/agentinfra/console-token).
	guesses []string
	writes  []string // files its redirections write
	reads   []string // files its redirections read
	cwd     string   // the folder it runs in ("" = the worktree, unknownDir after a cd not followed)
}

// grader grades one command line.
type grader struct {
	root    string // the worktree, its symlinks resolved
	control []string
	home    string
	cwd     string
	calls   []*call
	// line facts
	parseErr error
	subst    bool
	arith    bool     // arithmetic on variables
	assigned []string // variables the line gives the programs it runs (NAME=… cmd, export NAME=…)
	shellVar []string // variables it sets in the shell (NAME=…, read NAME): in the environment when already exported
}

func (g *grader) place(c *call, p string) Place { return judge(g.root, g.control, g.home, c.cwd, p) }

// protected judges p, a word of c, and reports whether it leads into a git
// directory or to one of agentinfra's control files (not merely outside
// the worktree: a command may read /usr/include), or names a .git folder
// wherever it is (cp -r /elsewhere/.git sub/ plants one).
func (g *grader) protected(c *call, p string) (Place, bool) {
	pl := g.place(c, p)
	if pl.Where == whereGit || pl.Where == whereControl {
		return pl, true
	}
	for _, el := range strings.Split(filepath.ToSlash(p), "/") {
		if gitName(el) {
			pl.Never = "it names a .git folder (git's own files: a hook or a config setting there runs commands)"
			return pl, true
		}
	}
	return pl, false
}

var (
	shells       = []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "rbash", "busybox", "yash", "posh"}
	interpreters = []string{"node", "nodejs", "deno", "bun", "lua", "luajit", "tclsh", "wish", "expect", "Rscript", "R", "julia", "pwsh",
		"powershell", "osascript", "irb", "jshell", "groovy", "java", "kotlin", "scala", "dotnet", "swift", "ghci", "runghc", "runhaskell",
		"racket", "guile", "sbcl", "erl", "escript", "elixir", "iex", "mix", "clojure", "clj", "jrunscript", "jjs", "qjs", "gjs", "ts-node", "tsx"}
	interpreterRe = regexp.MustCompile(`^(python|pypy|ruby|perl|php|lua)[0-9.]*$`)
	wrappers      = []string{"env", "xargs", "ionice", "setsid", "chroot", "unshare", "nsenter", "taskset",
		"chrt", "flock", "watch", "parallel", "strace", "ltrace", "gdb", "lldb", "valgrind", "script", "time", "exec", "eval", "command",
		"builtin", "source", ".", "trap", "alias", "enable", "hash", "fc", "fakeroot", "dbus-run-session", "xvfb-run", "tmux", "screen",
		"systemd-run", "at", "batch", "crontab", "sg", "newgrp", "firejail", "bwrap", "proot", "torsocks", "proxychains", "proxychains4",
		"sshpass", "caffeinate", "catchsegv", "entr", "inotifywait", "retry", "uvx", "pipx"}
	asOthers   = []string{"sudo", "su", "doas", "pkexec", "runuser"}
	editors    = []string{"vi", "vim", "nvim", "view", "vimdiff", "ex", "ed", "emacs", "emacsclient", "nano"}
	nodePMs    = []string{"npm", "yarn", "pnpm", "npx", "pnpx", "bunx", "corepack"}
	otherPMs   = []string{"pip", "pip3", "poetry", "pdm", "uv", "conda", "mamba", "micromamba", "gem", "bundle", "bundler", "composer", "hatch", "tox", "nox", "cpan", "cpanm"}
	builders   = []string{"make", "gmake", "bmake", "cmake", "ctest", "ninja", "just", "task", "go-task", "rake", "gradle", "gradlew", "mvn", "mvnw", "ant", "bazel", "bazelisk", "meson", "scons", "nix", "nix-shell", "nix-build", "earthly", "mage"}
	containers = []string{"docker", "podman", "nerdctl", "kubectl", "lima", "limactl", "vagrant"}
	archivers  = []string{"tar", "bsdtar", "gtar", "zip", "unzip", "cpio", "7z", "7za", "7zr", "patch", "ar", "unrar"}
	remotes    = []string{"ssh", "scp", "sftp", "rsync"}
	awks       = []string{"awk", "gawk", "mawk", "nawk"}
	seds       = []string{"sed", "gsed"}
	finds      = []string{"find", "gfind", "fd", "fdfind"}
	writers    = []string{"cp", "mv", "ln", "install", "rm", "rmdir", "mkdir", "touch", "tee", "truncate", "shred", "chmod", "chown", "chgrp",
		"unlink", "link", "mkfifo", "mknod", "rsync", "dd", "sort", "sed", "gsed", "curl", "wget", "split", "csplit", "go"}
	network = []string{"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "socat", "telnet", "ftp", "http", "https", "httpie", "xh", "aria2c"}
	system  = []string{"dd", "mkfs", "shutdown", "reboot", "halt", "poweroff", "systemctl", "launchctl", "mount", "umount", "insmod", "modprobe", "sysctl", "iptables", "nft"}
)

// commandForms is the command table, in the order docs/supervision.md
// shows it.
var commandForms = []commandForm{
	{Form: "git `-c`, `--config-env`; `clone -c`/`--config`; `clone`/`init --template`", Example: "git -c core.pager='sh -c id' log", Risk: RiskCritical,
		call: gitRow(func(g *grader, c *call, gc gitCall) string {
			if len(gc.configs) > 0 {
				return "git -c " + gc.configs[0] + " sets git's configuration for this run: settings such as alias.NAME=!cmd, core.fsmonitor, core.pager, core.sshCommand, core.hooksPath and core.editor run commands"
			}
			if (gc.sub == "clone" || gc.sub == "init") && hasOption(gc.args, "--template") ||
				gc.sub == "clone" && (hasOption(gc.args, "--config") || hasOption(gc.args, "-c")) {
				return "git " + gc.sub + " --config/--template sets the new repository's configuration or hooks, which run commands"
			}
			return ""
		})},
	{Form: "`git NAME` where NAME is not one of git's own commands (an alias, or a git-NAME program)", Example: "git x", Risk: RiskHigh,
		call: gitRow(func(g *grader, c *call, gc gitCall) string {
			if gc.sub != "" && !gitBuiltins[gc.sub] {
				return "git " + gc.sub + " is not one of git's own commands: it runs an alias or a program named git-" + gc.sub
			}
			return ""
		})},
	{Form: "`git config` that writes (anything but `--get`, `--list`, `get`, `list` or reading one name)", Example: "git config core.fsmonitor 'touch /tmp/p'", Risk: RiskCritical,
		call: gitRow(func(g *grader, c *call, gc gitCall) string {
			if gc.sub == "config" && gitConfigWrites(gc.args) {
				return "git config writes git's configuration: core.fsmonitor, core.hooksPath, core.pager, aliases and the like run commands later"
			}
			return ""
		})},
	{Form: "`git submodule`, `--recurse-submodules`", Example: "git submodule add https://example.com/r.git", Risk: RiskCritical,
		call: gitRow(func(g *grader, c *call, gc gitCall) string {
			if gc.sub == "submodule" {
				return "git submodule clones and checks out other repositories, whose configuration and hooks run commands"
			}
			for _, a := range gc.args {
				if strings.HasPrefix(a, "--recurse-submodules") && a != "--recurse-submodules=no" {
					return "git " + gc.sub + " " + a + " clones and checks out other repositories, whose configuration and hooks run commands"
				}
			}
			return ""
		})},
	{Form: "git `--upload-pack`, `--receive-pack`, `--exec`, `clone -u`, `ls-remote -u`, and `ext::`/`fd::` remotes", Example: "git fetch --upload-pack='touch /tmp/p' origin", Risk: RiskCritical,
		call: gitRow(func(g *grader, c *call, gc gitCall) string {
			for _, o := range []string{"--upload-pack", "--receive-pack", "--exec"} {
				if hasOption(gc.args, o) {
					return "git " + gc.sub + " " + o + " runs the program it names"
				}
			}
			if (gc.sub == "clone" || gc.sub == "ls-remote") && hasShort(gc.args, 'u') {
				return "git " + gc.sub + " -u runs the program it names"
			}
			for _, a := range gc.args {
				if strings.HasPrefix(a, "ext::") || strings.HasPrefix(a, "fd::") {
					return "git " + gc.sub + " " + a + ": an ext:: or fd:: remote runs a command"
				}
			}
			return ""
		})},
	{Form: "git commands that run a command they are given or configured: `rebase -x`/`--exec`, `bisect run`, `difftool`, `mergetool`, `filter-branch`, `grep -O`, `send-email`, `hook`, `credential`, `maintenance`, `instaweb`, `daemon`, `p4`, `svn`", Example: "git rebase --exec 'sh -c id' main", Risk: RiskCritical,
		call: gitRow(func(g *grader, c *call, gc gitCall) string {
			switch gc.sub {
			case "rebase":
				if hasOption(gc.args, "--exec") || hasShort(gc.args, 'x') {
					return "git rebase --exec runs the command it is given after each commit"
				}
			case "bisect":
				if len(gc.args) > 0 && gc.args[0] == "run" {
					return "git bisect run runs the command it is given"
				}
			case "grep":
				if hasOption(gc.args, "--open-files-in-pager") || hasShort(gc.args, 'O') {
					return "git grep -O runs a pager it is given"
				}
			case "difftool", "mergetool", "filter-branch", "filter-repo", "send-email", "hook", "credential", "credential-store", "credential-cache",
				"maintenance", "instaweb", "daemon", "p4", "svn", "cvsimport", "cvsserver", "archimport", "quiltimport", "shell", "web--browse":
				return "git " + gc.sub + " runs commands it is given or configured (or hands out credentials)"
			}
			return ""
		})},
	{Form: "git `--output`, `--output-directory`, `format-patch -o`, `archive -o`, `bundle create` outside the worktree or into .git", Example: "git log --output=/tmp/out", Risk: RiskCritical,
		call: gitRow(func(g *grader, c *call, gc gitCall) string {
			outs := optionValues(gc.args, "--output", "--output-directory", "--export-marks")
			if gc.sub == "format-patch" || gc.sub == "archive" {
				outs = append(outs, optionValues(gc.args, "-o")...)
			}
			if gc.sub == "bundle" && len(gc.args) > 1 && gc.args[0] == "create" {
				outs = append(outs, gc.args[1])
			}
			for _, o := range outs {
				if pl := g.place(&call{cwd: gc.cwd(c.cwd)}, o); pl.Never != "" {
					return "git " + gc.sub + " writes " + pl.Shown() + ": " + pl.Never
				}
			}
			return ""
		})},
	{Form: "`git apply --unsafe-paths`; `git apply`, `git am` that write (not `--check`, `--stat`, `--numstat`, `--summary`): a patch may write agentinfra's control files", Example: "git apply --unsafe-paths p.diff", Risk: RiskCritical,
		call: gitRow(func(g *grader, c *call, gc gitCall) string {
			switch {
			case gc.sub == "apply" && hasOption(gc.args, "--unsafe-paths"):
				return "git apply --unsafe-paths writes files outside the worktree"
			case (gc.sub == "apply" || gc.sub == "am") && !hasOption(gc.args, "--check") && !hasOption(gc.args, "--stat") &&
				!hasOption(gc.args, "--numstat") && !hasOption(gc.args, "--summary") && !hasOption(gc.args, "--abort") && !hasOption(gc.args, "--show-current-patch"):
				return "git " + gc.sub + " writes the files its patch names, which are not seen before (agentinfra's control files too)"
			}
			return ""
		})},
	{Form: "git `-C`, `--git-dir`, `--work-tree`, `--separate-git-dir` outside the worktree, `--exec-path=`; `clone`, `init`, `worktree add` into a folder outside", Example: "git -C /tmp/other status", Risk: RiskCritical,
		call: gitRow(func(g *grader, c *call, gc gitCall) string {
			if gc.execPath {
				return "git --exec-path= runs git's own commands from another folder"
			}
			for _, d := range append(gc.dirs, optionValues(gc.args, "--separate-git-dir")...) {
				if pl := g.place(c, d); pl.Rel == "" {
					return "git works on the repository in " + pl.Shown() + ", outside the worktree: its configuration may run commands"
				}
			}
			if gc.sub == "clone" || gc.sub == "init" || gc.sub == "worktree" && len(gc.args) > 0 && gc.args[0] == "add" {
				for _, a := range operands(gc.args) {
					if strings.Contains(a, "://") || strings.HasPrefix(a, "git@") {
						continue
					}
					if pl := g.place(&call{cwd: gc.cwd(c.cwd)}, a); pl.Rel == "" {
						return "git " + gc.sub + " works on " + pl.Shown() + ", outside the worktree"
					}
				}
			}
			return ""
		})},
	{Form: "go `-exec`, `-toolexec`, `-vettool`", Example: "go test -exec 'sh -c id' ./...", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if c.name != "go" {
				return ""
			}
			for _, o := range []string{"-exec", "-toolexec", "-vettool"} {
				if hasOption(c.args, o) || hasOption(c.args, "-"+o) {
					return "go " + o + " runs the program it names"
				}
			}
			return ""
		}},
	{Form: "`go run`, `go generate`, `go tool`", Example: "go run ./cmd/x", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if sub := goSub(c); sub == "run" || sub == "generate" || sub == "tool" {
				return "go " + sub + " runs a program (go generate runs the commands of //go:generate lines)"
			}
			return ""
		}},
	{Form: "`go install`, `go env -w`/`-u`, `go clean -cache`/`-modcache`/`-fuzzcache`", Example: "go env -w GOFLAGS=-toolexec=x", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			switch sub := goSub(c); {
			case sub == "install":
				return "go install writes programs outside the worktree (GOBIN)"
			case sub == "env" && (hasOption(c.args, "-w") || hasOption(c.args, "-u")):
				return "go env -w changes the user's go environment (GOFLAGS=-toolexec=… runs commands in every later go command)"
			case sub == "clean" && (hasOption(c.args, "-cache") || hasOption(c.args, "-modcache") || hasOption(c.args, "-fuzzcache")):
				return "go clean -cache/-modcache removes files outside the worktree"
			}
			return ""
		}},
	{Form: "`cargo run`, `cargo install`, `cargo --config`", Example: "cargo run", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if c.name != "cargo" {
				return ""
			}
			if hasOption(c.args, "--config") || hasOption(c.args, "-Z") {
				return "cargo --config can name a runner or a wrapper that runs commands"
			}
			if sub := firstOperand(c.args); sub == "run" || sub == "r" || sub == "install" || sub == "uninstall" {
				return "cargo " + sub + " runs a program or writes outside the worktree"
			}
			return ""
		}},
	{Form: "npm, yarn, pnpm (scripts, installs, exec: anything but `ls`, `view`, `info`, `outdated`, `why`, `--version`), npx, pnpx, bunx", Example: "npm test", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if !slices.Contains(nodePMs, c.name) {
				return ""
			}
			sub := firstOperand(c.args)
			safe := []string{"ls", "list", "ll", "la", "view", "v", "info", "show", "outdated", "why", "help", "search"}
			if c.name == "npx" || c.name == "pnpx" || c.name == "bunx" || c.name == "corepack" || !(slices.Contains(safe, sub) || infoOnly(c.args) || c.name == "npm" && len(c.args) == 0) {
				return c.name + " " + sub + " runs package scripts or installs packages, whose lifecycle scripts run"
			}
			return ""
		}},
	{Form: "pip, poetry, uv, pdm, conda, gem, bundle, composer… (installs and runs: anything but `list`, `show`, `freeze`, `--version`)", Example: "pip install -e .", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if !slices.Contains(otherPMs, c.name) {
				return ""
			}
			sub := firstOperand(c.args)
			if slices.Contains([]string{"list", "show", "freeze", "check", "help", "search", "info", "outdated"}, sub) || infoOnly(c.args) {
				return ""
			}
			return c.name + " " + sub + " installs or runs packages, whose build scripts run"
		}},
	{Form: "make and other build runners (cmake, ninja, just, task, rake, gradle, mvn, bazel, …): they run the commands the project defines", Example: "make", Risk: RiskCritical,
		call: running(builders, " runs the commands the project's files define (which an agent can write)")},
	{Form: "a shell: sh, bash, zsh, dash, ksh, fish, busybox… (except `bash -c 'LINE'` alone, whose LINE is judged)", Example: "bash script.sh", Risk: RiskCritical,
		call: running(shells, " runs whatever it is given (a script, its standard input, -c)")},
	{Form: "an interpreter: python, node, perl, ruby, php, deno, bun, lua, java, pwsh, osascript, …", Example: "python3 -c 'import os; os.system(\"id\")'", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if (slices.Contains(interpreters, c.name) || interpreterRe.MatchString(c.name)) && !infoOnly(c.args) {
				return c.name + " runs the code it is given"
			}
			return ""
		}},
	{Form: "awk with `system`, `getline`, a pipe, a redirection, `@load` or a program file", Example: "awk 'BEGIN{system(\"id\")}'", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if !slices.Contains(awks, c.name) {
				return ""
			}
			if awkRuns(c.args) {
				return c.name + " can run commands (system, getline, pipes) and write files"
			}
			return ""
		}},
	{Form: "sed with a script that does more than print, delete and substitute (`e`, `w`, `r`, `s///e`, a script file)", Example: "sed -n '1e id' README.md", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if slices.Contains(seds, c.name) && !sedSafe(c.args) {
				return c.name + " with this script can run commands (e) or write files (w)"
			}
			return ""
		}},
	{Form: "a program that runs another: env, xargs, exec, eval, command, source, trap, alias, watch, strace, tmux, … (timeout, nice, nohup, time and stdbuf are not: the command they run is judged)", Example: "env sh -c id", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if !slices.Contains(wrappers, c.name) {
				return ""
			}
			if c.name == "command" && (hasShort(c.args, 'v') || hasShort(c.args, 'V')) {
				return ""
			}
			return c.name + " runs another command (or code) that agentinfra does not see"
		}},
	{Form: "find `-exec`, `-execdir`, `-ok`, `-okdir`, `-delete`, `-fprint`; fd `-x`/`-X`", Example: "find . -exec sh -c id \\;", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if !slices.Contains(finds, c.name) {
				return ""
			}
			for _, a := range c.args {
				switch a {
				case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
					return c.name + " " + a + " runs a command or deletes or writes files"
				}
			}
			if c.name != "find" && c.name != "gfind" && (hasOption(c.args, "--exec") || hasOption(c.args, "--exec-batch") || hasShort(c.args, 'x') || hasShort(c.args, 'X')) {
				return c.name + " --exec runs a command"
			}
			return ""
		}},
	{Form: "sudo, su, doas, pkexec, runuser", Example: "sudo ls", Risk: RiskCritical,
		call: running(asOthers, " runs a command as another user")},
	{Form: "agentinfra itself (approve, reject, answer, steer, session, …): an agent never decides", Example: "agentinfra approve 87 --reason x", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if c.name == "agentinfra" || c.name == "agentinfra-full" {
				return "an agent runs agentinfra, which decides requests and changes sessions: only a person may"
			}
			return ""
		}},
	{Form: "an editor that runs commands: vi, vim, nvim, ex, ed, emacs, nano", Example: "vim -c '!id'", Risk: RiskCritical,
		call: running(editors, " can run commands (:!, -c)")},
	{Form: "docker, podman, kubectl… (anything but `ps`, `images`, `logs`, `inspect`, `get`, `describe`, `version`)", Example: "docker run --rm alpine id", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if !slices.Contains(containers, c.name) {
				return ""
			}
			sub := firstOperand(c.args)
			if slices.Contains([]string{"ps", "images", "logs", "inspect", "get", "describe", "version", "info", "top", "stats", "events", "history", "help"}, sub) || infoOnly(c.args) {
				return ""
			}
			return c.name + " " + sub + " runs code in a container (with whatever it mounts)"
		}},
	{Form: "ssh, scp, sftp with `-o`, `-F`; rsync with `-e`, `--rsh`, `--rsync-path`", Example: "ssh -o ProxyCommand='sh -c id' host", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			switch c.name {
			case "ssh", "scp", "sftp":
				if hasShort(c.args, 'o') || hasShort(c.args, 'F') || hasShort(c.args, 'S') {
					return c.name + " -o/-F can set ProxyCommand or LocalCommand, which run commands here"
				}
			case "rsync":
				if hasOption(c.args, "--rsh") || hasOption(c.args, "--rsync-path") || hasShort(c.args, 'e') {
					return "rsync -e/--rsync-path runs the program it names"
				}
			}
			return ""
		}},
	{Form: "tar `-x` and `--to-command`, `-I`, `--checkpoint-action`, `-F`; unzip, cpio `-i`, 7z `x`, patch, zip `-TT`: an archive or a patch may write .git or control files", Example: "tar -xf a.tar", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if r := archiveRuns(c); r != "" {
				return r
			}
			return ""
		}},
	{Form: "a program run by its path (`./x`, `bin/x`, `/tmp/x`; not /bin, /usr/bin, /usr/local/bin, /sbin, /usr/sbin)", Example: "./build.sh", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if c.prog == "" || !strings.Contains(c.prog, "/") {
				return ""
			}
			if d := path.Dir(c.prog); !trustedDir(d) {
				return "runs the program " + c.prog + ": a file the agent may have written"
			}
			return ""
		}},
	{Form: "a program only the shell knows (`$X …`), or a word only the shell knows (a variable, a glob) given to a program this table names", Example: "git $OPTS status", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if c.prog == "" {
				return "the program to run is only known to the shell (a variable or a substitution)"
			}
			if c.opaque && tabled[c.name] {
				return "a word only the shell knows (a variable, a glob) is given to " + c.name + ": it could make it any of the forms that run code"
			}
			return ""
		}},
	{Form: "command substitution `$( )`, backquotes, process substitution `<( )`, `>( )`, `${x@P}`", Example: "echo $(id)", Risk: RiskCritical,
		line: func(g *grader) string {
			if g.subst {
				return "a command or process substitution runs a command whose output becomes part of the line"
			}
			return ""
		}},
	{Form: "arithmetic on variables (`$((x))`, `(( x ))`, `for ((…))`, `[[ x -eq 1 ]]`, `${a[x]}`): bash evaluates a value such as `a[$(cmd)]` again, running cmd", Example: "(( n + 1 ))", Risk: RiskCritical,
		line: func(g *grader) string {
			if g.arith {
				return "arithmetic on a variable: bash evaluates its value again, and a value such as a[$(cmd)] runs cmd"
			}
			return ""
		}},
	{Form: "an environment assignment (`NAME=… cmd`, `export NAME=…`, `read NAME`) of a variable that can run code: GIT_*, LD_*, PATH, PAGER, EDITOR, GOFLAGS, NODE_OPTIONS, BASH_ENV, … (all but a few inert ones: LANG, LC_*, TZ, NO_COLOR, CGO_ENABLED, GOOS, GOARCH, …)", Example: "GIT_PAGER='sh -c id' git log", Risk: RiskCritical,
		line: func(g *grader) string {
			for _, n := range g.assigned {
				if !inertVar(n) {
					return "sets " + n + " for the programs it runs: variables such as GIT_*, LD_PRELOAD, PATH, PAGER and GOFLAGS change what they run"
				}
			}
			for _, n := range g.shellVar {
				// An upper-case name may be in the environment already
				// (PATH, GIT_DIR): setting it changes what later programs run.
				if !inertVar(n) && strings.ToUpper(n) == n {
					return "sets " + n + ": variables such as GIT_*, LD_PRELOAD, PATH, PAGER and GOFLAGS change what programs run"
				}
			}
			return ""
		}},
	{Form: "a line agentinfra cannot parse as bash", Example: "echo 'x", Risk: RiskCritical,
		line: func(g *grader) string {
			if g.parseErr != nil {
				return "agentinfra cannot parse it as bash (" + g.parseErr.Error() + "), so it cannot tell what it runs"
			}
			return ""
		}},
	{Form: "a redirection (`>`, `>>`, `&>`, `>|`, `<>`, `>&FILE`) to a file outside the worktree, into .git, a control file or a secrets file", Example: "echo x > /tmp/x", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			for _, w := range c.writes {
				if w == "" {
					return "redirects to a file only the shell knows (a variable, a glob)"
				}
				pl := g.place(c, w)
				switch {
				case pl.Never != "":
					return "writes " + pl.Shown() + ": " + pl.Never
				case pl.Secret:
					return "writes a secrets path: " + pl.Shown()
				}
			}
			return ""
		}},
	{Form: "a word naming a path inside .git (any depth, a gitdir: link, through a symlink), a .git folder anywhere, or an agentinfra control file (`.agent/config.yaml`, `.agent/policy.yaml`, `.agent/state/`, the user's agentinfra folder)", Example: "cp hook .git/hooks/pre-commit", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			for _, w := range append(append(wordsAndValues(c.args), c.reads...), c.guesses...) {
				if pl, ok := g.protected(c, w); ok {
					return "names " + pl.Shown() + ": " + pl.Never
				}
			}
			return ""
		}},
	{Form: "a command that writes (cp, mv, ln, install, rm, mkdir, touch, tee, chmod, chown, dd `of=`, sed `-i`, sort `-o`, curl `-o`, wget `-O`, go `-o`, …) a file outside the worktree, recursively the worktree itself or .agent, or copies a folder from outside into it", Example: "cp a.txt /tmp/a.txt", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			for _, t := range writeTargets(c) {
				pl := g.place(c, t)
				if pl.Rel == "" {
					return c.name + " writes " + pl.Shown() + ": " + pl.Never
				}
				if recursive(c) && (pl.Rel == "." || pl.Rel == ".agent") {
					return c.name + " works recursively on " + pl.Shown() + ", which holds .git and agentinfra's control files"
				}
			}
			if (c.name == "cp" || c.name == "rsync" || c.name == "mv") && recursive(c) || c.name == "mv" {
				ops := operands(c.args)
				for i, o := range ops {
					if pl := g.place(c, o); i < len(ops)-1 && pl.Rel == "" {
						return c.name + " copies the folder " + pl.Shown() + " from outside the worktree into it: it may hold a .git folder"
					}
				}
			}
			return ""
		}},
	{Form: "git push with `--force`, `-f` or a `+refspec`", Example: "git push --force origin main", Risk: RiskCritical,
		call: gitRow(func(g *grader, c *call, gc gitCall) string {
			if gc.sub != "push" {
				return ""
			}
			if hasShort(gc.args, 'f') || slices.ContainsFunc(gc.args, func(s string) bool {
				return strings.HasPrefix(s, "--force") || strings.HasPrefix(s, "+")
			}) {
				return "force push"
			}
			return ""
		})},
	{Form: "system changes: dd, mkfs, shutdown, reboot, systemctl, mount, modprobe, iptables, …", Example: "mkfs.ext4 /dev/sda1", Risk: RiskCritical,
		call: func(g *grader, c *call) string {
			if slices.Contains(system, c.name) || strings.HasPrefix(c.name, "mkfs.") {
				return c.name + " changes the system"
			}
			return ""
		}},
	{Form: "network: curl, wget, ssh, scp, rsync, nc, …; git push, fetch, pull, clone, ls-remote; `/dev/tcp`", Example: "curl https://example.com", Risk: RiskHigh,
		call: func(g *grader, c *call) string {
			if slices.Contains(network, c.name) {
				return "network: " + c.name
			}
			for _, f := range append(c.reads, c.writes...) {
				if strings.HasPrefix(f, "/dev/tcp/") || strings.HasPrefix(f, "/dev/udp/") {
					return "network: " + f
				}
			}
			if gc := parseGit(c.args); c.name == "git" && slices.Contains([]string{"push", "fetch", "pull", "clone", "ls-remote"}, gc.sub) {
				return "network: git " + gc.sub
			}
			if sub := goSub(c); c.name == "go" && (sub == "get" || sub == "mod" && firstOperand(c.args[1:]) == "download") {
				return "network: go " + sub
			}
			return ""
		}},
	{Form: "`rm -r` inside the worktree", Example: "rm -r build", Risk: RiskHigh,
		call: func(g *grader, c *call) string {
			if c.name == "rm" && recursive(c) {
				return "rm -r"
			}
			return ""
		}},
	{Form: "a word naming a secrets path (`.env`, `*.pem`, `.ssh/`, `credentials`, …), also through a symlink", Example: "cat .env", Risk: RiskHigh,
		call: func(g *grader, c *call) string {
			for _, w := range append(append(wordsAndValues(c.args), c.reads...), c.guesses...) {
				if pl := g.place(c, w); pl.Secret {
					return "touches a secrets path: " + pl.Shown()
				}
			}
			return ""
		}},
}

// gitRow is the test of a git form: fn sees git's command line parsed.
func gitRow(fn func(g *grader, c *call, gc gitCall) string) func(*grader, *call) string {
	return func(g *grader, c *call) string {
		if c.name != "git" {
			return ""
		}
		return fn(g, c, parseGit(c.args))
	}
}

// running is the test of a form that is any run of one of programs (but
// asking for its version or help): the reason is the program's name and why.
func running(programs []string, why string) func(*grader, *call) string {
	return func(g *grader, c *call) string {
		if slices.Contains(programs, c.name) && !infoOnly(c.args) {
			return c.name + why
		}
		return ""
	}
}

// tabled are the programs some form of the table looks at.
var tabled = func() map[string]bool {
	m := map[string]bool{}
	for _, list := range [][]string{shells, interpreters, wrappers, asOthers, editors, nodePMs, otherPMs, builders, containers, archivers,
		remotes, awks, seds, finds, writers, network, system, {"git", "go", "cargo", "agentinfra", "agentinfra-full"}} {
		for _, n := range list {
			m[n] = true
		}
	}
	return m
}()

// grade records what a command line runs — every program with its words
// and redirections, substitutions, assignments, arithmetic — for the
// table's tests (assessCommand runs them).
func (g *grader) grade(line string, depth int) {
	f, err := parseLine(line)
	if err != nil {
		g.parseErr = err
		return
	}
	if depth > 4 {
		g.parseErr = errTooDeep
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			g.subst = true
		case *syntax.ParamExp:
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && x.Exp.Word.Lit() == "P" {
				g.subst = true // ${x@P} expands $(…) in the value
			}
			if x.Excl || x.Index != nil && !numeric(x.Index) || x.Slice != nil && (!numeric(x.Slice.Offset) || !numeric(x.Slice.Length)) {
				g.arith = true
			}
		case *syntax.ArithmExp:
			g.arith = g.arith || !numeric(x.X)
		case *syntax.ArithmCmd:
			g.arith = g.arith || !numeric(x.X)
		case *syntax.CStyleLoop:
			g.arith = true
		case *syntax.BinaryTest:
			if x.Op >= syntax.TsEql && x.Op <= syntax.TsGeq && (!numericWord(x.X) || !numericWord(x.Y)) {
				g.arith = true
			}
		case *syntax.DeclClause:
			for _, a := range x.Args {
				if a.Name != nil && (a.Value != nil || a.Array != nil) {
					g.assigned = append(g.assigned, a.Name.Value)
				}
			}
		case *syntax.Stmt:
			g.stmt(x, depth)
		}
		return true
	})
}

// numeric reports whether an arithmetic expression holds only numbers:
// bash evaluates a variable's value as an expression again, and a value
// like a[$(cmd)] runs cmd.
func numeric(x syntax.ArithmExpr) bool {
	if x == nil {
		return true
	}
	ok := true
	syntax.Walk(x, func(n syntax.Node) bool {
		switch y := n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst:
			ok = false
		case *syntax.Lit:
			if strings.Trim(y.Value, "0123456789xXabcdefABCDEF#") != "" || y.Value != "" && !strings.ContainsAny(y.Value[:1], "0123456789") {
				ok = false
			}
		}
		return ok
	})
	return ok
}

func numericWord(x syntax.TestExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && numeric(w)
}

var errTooDeep = errors.New("shells nested more than 4 deep")

// stmt records the program a statement runs, with its redirections, and
// follows cd.
func (g *grader) stmt(st *syntax.Stmt, depth int) {
	c := &call{cwd: g.cwd}
	for _, r := range st.Redirs {
		w, ok := literal(r.Word)
		switch r.Op {
		case syntax.RdrIn:
			if ok {
				c.reads = append(c.reads, w)
			}
			continue
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			continue
		case syntax.DplOut, syntax.DplIn:
			if ok && dupTarget(w) {
				continue
			}
		}
		switch {
		case !ok:
			c.writes = append(c.writes, "") // a file only the shell knows: judged as such
		case !harmlessDevice(w):
			c.writes = append(c.writes, w)
		}
	}
	ce, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall {
		if len(c.writes) > 0 || len(c.reads) > 0 {
			c.prog, c.name = "(group)", "(group)"
			g.calls = append(g.calls, c)
		}
		return
	}
	for _, a := range ce.Assigns {
		if a.Name == nil {
			continue
		}
		if len(ce.Args) > 0 {
			g.assigned = append(g.assigned, a.Name.Value)
		} else {
			g.shellVar = append(g.shellVar, a.Name.Value)
		}
	}
	if len(ce.Args) == 0 {
		if len(c.writes) > 0 || len(c.reads) > 0 {
			c.prog, c.name = "(redirection)", "(redirection)"
			g.calls = append(g.calls, c)
		}
		return
	}
	for i, w := range ce.Args {
		s, ok := literal(w)
		if !ok {
			c.opaque = true
			if gs, ok := withHome(w, g.home); ok {
				c.guesses = append(c.guesses, gs)
			}
		}
		if i == 0 {
			c.prog = s
			continue
		}
		c.args = append(c.args, s)
	}
	c.name = path.Base(c.prog)
	if c.prog == "" {
		c.name = ""
	}
	unwrap(c)
	if inner, ok := shellDashC(append([]string{c.prog}, c.args...)); ok && !c.opaque {
		if len(c.writes) > 0 || len(c.reads) > 0 {
			g.calls = append(g.calls, &call{prog: "(redirection)", name: "(redirection)", writes: c.writes, reads: c.reads, cwd: c.cwd})
		}
		g.grade(inner, depth+1)
		return
	}
	switch c.name {
	case "cd", "pushd", "popd":
		g.cwd = g.cd(c)
	case "read", "mapfile", "readarray":
		g.shellVar = append(g.shellVar, operands(c.args)...)
	case "printf":
		g.shellVar = append(g.shellVar, optionValues(c.args, "-v")...)
	}
	g.calls = append(g.calls, c)
}

// timers are programs that run the command they are given as it is (with
// a time limit, a priority, output buffering): the command is judged. The
// values are their options that take a value.
var timers = map[string][]string{"timeout": {"-s", "--signal", "-k", "--kill-after"}, "nice": {"-n", "--adjustment"}, "nohup": nil,
	"time": {"-f", "--format", "-o", "--output"}, "stdbuf": {"-i", "-o", "-e", "--input", "--output", "--error"}}

// unwrap makes c the command a timer runs (timeout 60 go test ./... is
// go test ./...); a timer with nothing to run stays as it is.
func unwrap(c *call) {
	for depth := 0; depth < 8; depth++ {
		valued, ok := timers[c.name]
		if !ok || c.opaque {
			return
		}
		args := c.args
		for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
			if args[0] == "--" {
				args = args[1:]
				break
			}
			if slices.Contains(valued, args[0]) && len(args) > 1 {
				args = args[1:]
			}
			args = args[1:]
		}
		if c.name == "timeout" && len(args) > 0 {
			args = args[1:] // the duration
		}
		if len(args) == 0 {
			return
		}
		c.prog, c.args = args[0], args[1:]
		c.name = path.Base(c.prog)
	}
}

// cd is the folder after c (a cd, pushd or popd): unknownDir when it cannot
// be followed (no literal folder, -, ~, pushd/popd's stack).
func (g *grader) cd(c *call) string {
	ops := operands(c.args)
	if c.name != "cd" || c.opaque || len(ops) != 1 || ops[0] == "-" || strings.HasPrefix(ops[0], "~") {
		return unknownDir
	}
	pl := g.place(c, ops[0])
	if pl.Abs == "" {
		return unknownDir
	}
	return pl.Abs
}

// writeTargets are the files a writing command writes.
func writeTargets(c *call) []string {
	ops := operands(c.args)
	last := func() []string {
		t := optionValues(c.args, "-t", "--target-directory")
		if len(ops) > 0 {
			t = append(t, ops[len(ops)-1])
		}
		return t
	}
	switch c.name {
	case "cp", "ln", "install", "rsync", "link":
		return last()
	case "mv", "rm", "rmdir", "mkdir", "touch", "tee", "truncate", "shred", "chmod", "chown", "chgrp", "unlink", "mkfifo", "mknod", "split", "csplit":
		return ops
	case "dd":
		var out []string
		for _, a := range c.args {
			if v, ok := strings.CutPrefix(a, "of="); ok {
				out = append(out, v)
			}
		}
		return out
	case "sort":
		return optionValues(c.args, "-o", "--output")
	case "sed", "gsed":
		if hasShort(c.args, 'i') || hasOption(c.args, "--in-place") {
			if len(optionValues(c.args, "-e", "--expression")) > 0 {
				return ops
			}
			if len(ops) > 1 {
				return ops[1:]
			}
		}
	case "curl":
		return optionValues(c.args, "-o", "--output", "--output-dir", "-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save")
	case "wget":
		return optionValues(c.args, "-O", "--output-document", "-P", "--directory-prefix", "-o", "--output-file", "-a", "--append-output")
	case "go":
		return optionValues(c.args, "-o", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile", "-trace", "-outputdir")
	}
	return nil
}

func recursive(c *call) bool {
	return hasShort(c.args, 'r') || hasShort(c.args, 'R') || hasOption(c.args, "--recursive") ||
		(c.name == "cp" || c.name == "rsync") && (hasShort(c.args, 'a') || hasOption(c.args, "--archive"))
}

// withHome is a word's value with $HOME or ${HOME} filled in (~ when home
// is not known), when that is all the shell would expand in it.
func withHome(w *syntax.Word, home string) (string, bool) {
	if home == "" {
		home = "~"
	}
	var b strings.Builder
	var parts func(ps []syntax.WordPart) bool
	parts = func(ps []syntax.WordPart) bool {
		for _, part := range ps {
			switch x := part.(type) {
			case *syntax.ParamExp:
				if x.Param == nil || x.Param.Value != "HOME" || x.Exp != nil || x.Index != nil || x.Slice != nil || x.Repl != nil || x.Excl || x.Length {
					return false
				}
				b.WriteString(home)
			case *syntax.DblQuoted:
				if !parts(x.Parts) {
					return false
				}
			default:
				s, ok := literal(&syntax.Word{Parts: []syntax.WordPart{part}})
				if !ok {
					return false
				}
				b.WriteString(s)
			}
		}
		return true
	}
	if !parts(w.Parts) {
		return "", false
	}
	return b.String(), true
}

// wordsAndValues are a command's literal words, the values of its
// --opt=value and key=value words, and the files of its @file words (curl
// -d @file).
func wordsAndValues(args []string) []string {
	var out []string
	for _, a := range args {
		if a == "" {
			continue
		}
		if f, ok := strings.CutPrefix(a, "@"); ok && f != "" {
			out = append(out, f)
		}
		if _, v, ok := strings.Cut(a, "="); ok && v != "" {
			out = append(out, v)
			if strings.HasPrefix(a, "-") {
				continue
			}
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			continue
		}
		out = append(out, a)
	}
	return out
}

// hasOption reports whether args hold the option name (alone, or name=value).
func hasOption(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// hasShort reports whether args hold the one-letter option ch, alone or
// in a cluster (-xzf).
func hasShort(args []string, ch byte) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], ch) >= 0 {
			return true
		}
	}
	return false
}

// optionValues are the values given to the options names: `-o FILE`,
// `-oFILE` (one-letter options), `--output FILE`, `--output=FILE`.
func optionValues(args []string, names ...string) []string {
	var out []string
	for i, a := range args {
		for _, n := range names {
			switch {
			case a == n && i+1 < len(args):
				out = append(out, args[i+1])
			case strings.HasPrefix(a, n+"="):
				out = append(out, a[len(n)+1:])
			case len(n) == 2 && n[0] == '-' && n[1] != '-' && len(a) > 2 && strings.HasPrefix(a, n):
				out = append(out, a[2:])
			}
		}
	}
	return out
}

func operands(args []string) []string {
	var out []string
	rest := false
	for _, a := range args {
		if rest || !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
			continue
		}
		rest = a == "--"
	}
	return out
}

func firstOperand(args []string) string {
	if ops := operands(args); len(ops) > 0 {
		return ops[0]
	}
	return ""
}

// infoOnly: the program is only asked for its version or help.
func infoOnly(args []string) bool {
	return len(args) == 1 && slices.Contains([]string{"--version", "-version", "-v", "-V", "version", "--help", "-h", "help"}, args[0])
}

// trustedDir: programs from these folders are judged by their name.
func trustedDir(d string) bool {
	return slices.Contains([]string{"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"}, d)
}

// inertVar: setting it changes no program that runs, no file written.
func inertVar(n string) bool {
	return strings.HasPrefix(n, "LC_") || slices.Contains([]string{"LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "TERM", "COLUMNS", "LINES", "CI",
		"CGO_ENABLED", "GOOS", "GOARCH", "GOAMD64", "GOARM", "GOARM64", "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GOTRACEBACK", "GOEXPERIMENT", "GO111MODULE",
		"RUST_BACKTRACE", "RUST_LOG", "NODE_ENV", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "DEBUG", "VERBOSE", "REPLY_UNUSED"}, n)
}

// goSub is go's subcommand (after -C DIR).
func goSub(c *call) string {
	if c.name != "go" {
		return ""
	}
	args := c.args
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if args[0] == "-C" && len(args) > 1 {
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// gitCall is a git command line: its global options and subcommand.
type gitCall struct {
	configs  []string // -c / --config-env values
	dirs     []string // -C, --git-dir, --work-tree
	execPath bool     // --exec-path=DIR
	sub      string
	args     []string
}

// cwd is the folder git works in for its relative paths (after -C).
func (gc gitCall) cwd(cwd string) string {
	for _, d := range gc.dirs {
		if strings.HasPrefix(d, "/") {
			cwd = d
		} else if cwd != unknownDir {
			cwd = filepath.Join(cwd, d)
		}
	}
	return cwd
}

// gitValued are git's global options that take a value as the next word.
var gitValued = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true, "--config-env": true,
	"--super-prefix": true, "--attr-source": true, "--list-cmds": true}

func parseGit(args []string) gitCall {
	var gc gitCall
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			gc.sub, gc.args = a, args[i+1:]
			return gc
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !hasVal && gitValued[a] {
			if i+1 < len(args) {
				val = args[i+1]
			}
			i++
		}
		switch {
		case name == "-c" || name == "--config-env" || strings.HasPrefix(a, "-c"):
			v := val
			if v == "" {
				v = strings.TrimPrefix(a, "-c")
			}
			gc.configs = append(gc.configs, v)
		case name == "-C" || name == "--git-dir" || name == "--work-tree":
			gc.dirs = append(gc.dirs, val)
		case name == "--exec-path" && hasVal:
			gc.execPath = true
		}
	}
	return gc
}

// gitConfigWrites reports whether a git config command line (after
// "config") may write: only --get*, --list, get, list and reading one name
// are known to read.
func gitConfigWrites(args []string) bool {
	var ops []string
	read := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--get" || a == "--get-all" || a == "--get-regexp" || a == "--get-urlmatch" || a == "--get-color" || a == "--get-colorbool" ||
			a == "-l" || a == "--list" || strings.HasPrefix(a, "--get="):
			read = true
		case a == "--add" || a == "--unset" || a == "--unset-all" || a == "--replace-all" || a == "--rename-section" || a == "--remove-section" ||
			a == "-e" || a == "--edit":
			return true
		case a == "-f" || a == "--file" || a == "--blob" || a == "--type" || a == "--default" || a == "--comment":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			ops = append(ops, a)
		}
	}
	if len(ops) > 0 && (ops[0] == "get" || ops[0] == "list") {
		return false
	}
	if len(ops) > 0 && slices.Contains([]string{"set", "unset", "rename-section", "remove-section", "edit"}, ops[0]) {
		return true
	}
	return !(read || len(ops) == 1)
}

// gitBuiltins are git's own commands: `git NAME` with another NAME runs an
// alias or a git-NAME program.
var gitBuiltins = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr check-ignore
		check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit commit-graph commit-tree
		config count-objects credential credential-cache credential-store describe diagnose diff diff-files diff-index diff-tree difftool
		fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck fsmonitor--daemon gc
		get-tar-commit-id grep gui hash-object help hook http-backend index-pack init instaweb interpret-trailers log ls-files ls-remote ls-tree
		mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-one-file merge-tree mergetool mktag mktree multi-pack-index mv
		name-rev notes pack-objects pack-redundant pack-refs patch-id prune prune-packed pull push range-diff read-tree rebase receive-pack reflog
		refs remote repack replace replay request-pull rerere reset restore rev-list rev-parse revert rm send-email send-pack shortlog show
		show-branch show-index show-ref sparse-checkout stage stash status stripspace submodule switch symbolic-ref tag unpack-file
		unpack-objects update-index update-ref update-server-info upload-archive upload-pack var verify-commit verify-pack verify-tag version
		whatchanged worktree write-tree daemon p4 svn cvsimport cvsserver archimport quiltimport shell web--browse filter-repo`) {
		m[n] = true
	}
	return m
}()

// awkRuns reports whether an awk command may run commands or write files.
func awkRuns(args []string) bool {
	var prog string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-f" || strings.HasPrefix(a, "--file") || strings.HasPrefix(a, "-f") || a == "-E" || strings.HasPrefix(a, "--exec") ||
			a == "-l" || strings.HasPrefix(a, "--load") || strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--include"):
			return true
		case a == "-v" || a == "-F":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			if prog == "" {
				prog = a
			}
		}
	}
	return prog == "" || strings.ContainsAny(prog, "|>@") || strings.Contains(prog, "system") || strings.Contains(prog, "getline")
}

// sedScript is a script of addresses and the commands that only print,
// delete, substitute (no e or w flag) and move through the input.
var sedScript = func() *regexp.Regexp {
	re := `(?:/(?:[^/\\\n]|\\.)*/)`
	addr := `(?:\d+(?:~\d+)?|\$|` + re + `[IM]*)`
	rng := addr + `(?:\s*,\s*(?:` + addr + `|[+~]\d+))?`
	cmd := `(?:[pdnNPDhHgGxlz=]|[qQ]\d*|s` + re + `(?:[^/\\\n]|\\.)*/[gpiImM0-9]*|y` + re + `(?:[^/\\\n]|\\.)*/|[{}])`
	one := `\s*(?:` + rng + `\s*)?!?\s*` + cmd + `\s*`
	return regexp.MustCompile(`^(?:` + one + `(?:[;\n]` + one + `)*)?;?\s*$`)
}()

// sedSafe reports whether a sed command line only prints, deletes and
// substitutes (GNU sed's e, w, r and s///e run commands or touch files).
func sedSafe(args []string) bool {
	if hasOption(args, "--sandbox") {
		return true
	}
	if hasShort(args, 'f') || hasOption(args, "--file") {
		return false
	}
	scripts := optionValues(args, "-e", "--expression")
	if len(scripts) == 0 {
		ops := operands(args)
		if len(ops) == 0 {
			return false
		}
		scripts = ops[:1]
	}
	for _, s := range scripts {
		if !sedScript.MatchString(s) {
			return false
		}
	}
	return true
}

// archiveRuns is why an archive or patch command may run a program or write
// .git ("" when it does not).
func archiveRuns(c *call) string {
	switch c.name {
	case "tar", "bsdtar", "gtar":
		for _, o := range []string{"--to-command", "--use-compress-program", "--checkpoint-action", "--info-script", "--new-volume-script", "--rsh-command"} {
			if hasOption(c.args, o) {
				return c.name + " " + o + " runs a program"
			}
		}
		if hasShort(c.args, 'I') || hasShort(c.args, 'F') {
			return c.name + " -I/-F runs a program"
		}
		extract := hasShort(c.args, 'x') || hasOption(c.args, "--extract") || hasOption(c.args, "--get")
		if len(c.args) > 0 && !strings.HasPrefix(c.args[0], "-") && strings.ContainsRune(c.args[0], 'x') {
			extract = true // old-style bundled options: tar xzf a.tgz
		}
		if extract {
			return c.name + " extracts an archive: what it writes (.git/hooks, .agent/…) is not seen before"
		}
	case "unzip", "unrar":
		if !hasShort(c.args, 'l') && !hasShort(c.args, 'v') && !hasShort(c.args, 't') && !infoOnly(c.args) {
			return c.name + " extracts an archive: what it writes (.git/hooks, .agent/…) is not seen before"
		}
	case "cpio":
		if hasShort(c.args, 'i') || hasOption(c.args, "--extract") {
			return "cpio -i extracts an archive: what it writes is not seen before"
		}
	case "7z", "7za", "7zr", "ar":
		if s := firstOperand(c.args); s == "x" || s == "e" || strings.HasPrefix(s, "x") {
			return c.name + " extracts an archive: what it writes is not seen before"
		}
	case "patch":
		if !infoOnly(c.args) {
			return "patch writes the files its input names, .git ones too"
		}
	case "zip":
		if hasOption(c.args, "-TT") || hasOption(c.args, "--unzip-command") {
			return "zip -TT runs the program it names"
		}
	}
	return ""
}
