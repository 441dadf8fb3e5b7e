// Package coder is a small hand-written REST client for the parts of the
// Coder v2 API (checked against v2.27.1) that the fleet's Coder backend
// needs: templates and their presets and rich parameters, the caller's
// workspaces and their builds, and the AgentAPI app (coder/agentapi) of the
// agent inside a workspace, reached through Coder's app proxy.
//
// It deliberately does not import codersdk: the structs here carry only the
// fields the fleet reads, with the exact JSON names of Coder's responses
// (presets are PascalCase). Every error is an *Error whose Kind says what
// went wrong (unavailable, unauthorized, not authenticated, invalid, not
// found, conflict) so that adapters never read error text.
//
// Package codertest holds a stateful fake Coder server built on the same
// structs.
package coder
