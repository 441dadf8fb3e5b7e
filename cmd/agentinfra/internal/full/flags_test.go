package full

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/agentinfra/agentinfra/cmd/agentinfra/internal/cli"
)

// flagCase is one command line given to a NewCmdX: the Options it parses
// to, or the usage error (exit 2) it is refused with.
type flagCase[O any] struct {
	name    string
	argv    []string
	want    O
	wantErr string
}

// testFlags parses each case's argv with newCmd, whose run only records the
// Options, and compares the flags and arguments (the Factory's pieces are
// left out). Nothing runs and no workspace is read.
// newCmd is a NewCmdX of this package or of package cli.
func testFlags[F *Factory | *cli.Factory, O any](t *testing.T, newCmd func(F, func(context.Context, *O) error) *cobra.Command, cases []flagCase[O]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ff, _, _ := testFactory(t.TempDir(), cliOpts{})
			var f F
			switch p := any(&f).(type) {
			case **Factory:
				*p = ff
			case **cli.Factory:
				*p = ff.Factory
			}
			var got *O
			cmd := newCmd(f, func(_ context.Context, o *O) error { got = o; return nil })
			cmd.SetFlagErrorFunc(cli.FlagError) // as under the root
			cli.UsageArgs(cmd)
			cmd.SetArgs(tc.argv)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !cli.IsUsageError(err) {
					t.Fatalf("%q: error %v, want a usage error (exit 2) holding %q", tc.argv, err, tc.wantErr)
				}
				if got != nil {
					t.Fatalf("%q: ran with %+v despite the usage error", tc.argv, *got)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", tc.argv, err)
			}
			if got == nil {
				t.Fatalf("%q: the command did not run", tc.argv)
			}
			if g := withoutDeps(*got); !reflect.DeepEqual(g, tc.want) {
				t.Errorf("%q:\n got %+v\nwant %+v", tc.argv, g, tc.want)
			}
		})
	}
}

// withoutDeps zeroes what the Factory gives an Options (IO, Workspace, Now,
// Getenv, Cwd, the Factory itself, ...), leaving what the command line gave.
func withoutDeps[O any](o O) O {
	v := reflect.ValueOf(&o).Elem()
	for i := 0; i < v.NumField(); i++ {
		if fv := v.Field(i); fv.Kind() == reflect.Func || fv.Type() == reflect.TypeFor[*cli.IOStreams]() || fv.Type() == reflect.TypeFor[*Factory]() || fv.Type() == reflect.TypeFor[*cli.Factory]() || v.Type().Field(i).Name == "Cwd" {
			fv.SetZero()
		}
	}
	return o
}

// Every wrong invocation exits 2, whatever cobra's words for it: the
// argument checks of the whole tree raise usage errors (usageArgs).
func TestWrongInvocationsExitTwo(t *testing.T) {
	dir := t.TempDir()
	for _, argv := range [][]string{
		{"bogus"}, {"task", "bogus"}, {"task", "show"}, {"task", "show", "a", "b"},
		{"task", "list", "--bogus"}, {"agent", "start"}, {"skill", "nope"}, {"validate", "--fix", "move"},
	} {
		if code, _, errOut := runCLI(t, dir, cliOpts{}, argv...); code != 2 || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", argv, code, errOut)
		}
	}
	for _, argv := range [][]string{{}, {"task"}, {"agent"}} {
		if code, out, _ := runCLI(t, dir, cliOpts{}, argv...); code != 0 || !strings.Contains(out, "Available Commands") {
			t.Errorf("%q: exit %d; want 0 and the help", argv, code)
		}
	}
}
