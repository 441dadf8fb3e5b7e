package bridge

import "context"

func startGemini(ctx context.Context, req Request, g *gate) (Bridge, error) { panic("todo") }
