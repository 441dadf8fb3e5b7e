package matrix

import (
	"context"
	"fmt"

	"github.com/agentinfra/agentinfra/agenterr"
	"github.com/agentinfra/agentinfra/internal/mdtext"
)

// ErrUnfinishedMerge is a write refused because the matrix holds the
// conflict markers of a merge: the table around them does not read as one
// table, so an edit could land in the wrong place.
var ErrUnfinishedMerge = agenterr.New(agenterr.Refused, "the matrix holds unfinished merge conflicts")

// unfinishedMerge refuses a write to a matrix with conflict markers.
func unfinishedMerge(src []byte) error {
	blocks := ConflictBlocks(src)
	if len(blocks) == 0 {
		return nil
	}
	return &agenterr.Error{Kind: agenterr.Refused, Err: ErrUnfinishedMerge, Reason: fmt.Sprintf("the matrix holds %d unfinished merge %s (the first on line %d), so nothing was changed: finish %s first (`agentinfra validate` names each and how: --fix=ours ID, --fix=theirs ID, --fix=renumber, or an edit), then run the command again",
		len(blocks), mdtext.Plural(len(blocks), "conflict", "conflicts"), blocks[0].Line, mdtext.Plural(len(blocks), "it", "them"))}
}

// FinishConflicts is ModifyThen for finishing a merge's conflicts: fn must
// leave fewer conflict blocks than the file has (else nothing is written),
// and the result is not held to the error count of the conflicted file,
// which a marker line makes unreadable.
func (s *Store) FinishConflicts(ctx context.Context, fn func(d *Doc) error, finish func(d *Doc, err error) error) (*Doc, error) {
	return s.modify(ctx, func(d *Doc) error {
		before := len(ConflictBlocks(d.src))
		if before == 0 {
			return refused("the matrix holds no merge conflict: nothing to finish")
		}
		if err := fn(d); err != nil {
			return err
		}
		if len(ConflictBlocks(d.src)) >= before {
			return refusedf("finishing the conflicts would leave all %d of them; nothing was changed", before)
		}
		return nil
	}, finish, false)
}

// ReplaceBytes makes d the matrix src (parsed with d's vocabulary): for a
// change that rewrites the file as a whole, such as finishing conflicts.
func (d *Doc) ReplaceBytes(src []byte) { *d = *ParseWith(src, d.vocab) }
