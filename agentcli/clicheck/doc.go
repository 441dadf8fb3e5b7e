// Package clicheck knows the agent CLIs agentinfra supervises as they are
// on this machine: each CLI found (its path and version), whether the
// version is one agentinfra's tests pin (Tested, the one list of them), and
// a live check of its permission protocol through agentinfra's own bridge
// against a minimal fake model served in this process on 127.0.0.1 (no
// network): the CLI starts, asks permission for one shell command, is
// answered, runs it and hands the model the result, and stops. `agentinfra
// doctor` shows every finding; a supervised run is refused (Require) when
// its CLI fails the check, whose result is cached per binary and version,
// instead of running unsupervised or hanging.
package clicheck
