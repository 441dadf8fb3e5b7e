package matrix

import "github.com/agentinfra/agentinfra/agenterr"

// The package's errors are *agenterr.Error values: they carry what an
// adapter needs to speak in its own words (the CLI names its flags, the MCP
// server names its fields) and a kind that decides exit codes and error
// codes. Their text is for logs; no adapter reads it. The sentinels below
// are the kinds' (errors.Is(err, ErrInvalid) holds for every Invalid error).

// invalid is a value refused for a field: field is the domain name of what
// was given ("status", "priority", "difficulty", "mode", "skills", "agent",
// "id", "description", "created", "updated", "column", "sort", "limit").
func invalid(field, value, reason string, valid []string) error {
	return &agenterr.Error{Kind: agenterr.Invalid, Field: field, Value: value, Reason: reason, Valid: valid}
}

// refused is a change the codec will not make, because the file would not
// read back as intended (no override makes it).
func refused(reason string) error {
	return &agenterr.Error{Kind: agenterr.Refused, Reason: reason}
}
