package fleet

import (
	"github.com/agentinfra/agentinfra/agenterr"
)

// Error codes, HTTP-style, the same for every backend and adapter: each is
// agenterr.HTTPStatus of its kind (Invalid, NotFound, Conflict,
// Unavailable). The fleet's errors are *agenterr.Error values whose Field
// is the fleet input at fault ("name", "role", "page_size"...) and whose
// Reason says what to do; adapters never read the text.
const (
	CodeBadInput    = 400
	CodeNotFound    = 404
	CodeConflict    = 409
	CodeUnavailable = 503
)

// CodeOf returns the HTTP-style code of err (500 when it carries no kind).
func CodeOf(err error) int { return agenterr.HTTPStatus(err) }
