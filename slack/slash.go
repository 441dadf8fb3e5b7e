package slack

import (
	"context"

	"github.com/slack-go/slack"
)

func (s *Service) onSlash(ctx context.Context, cmd slack.SlashCommand) string { return "" }
