package bridge

import "context"

func startCodex(ctx context.Context, req Request, g *gate) (Bridge, error)  { panic("todo") }
func startGemini(ctx context.Context, req Request, g *gate) (Bridge, error) { panic("todo") }
