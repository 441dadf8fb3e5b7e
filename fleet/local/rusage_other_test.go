//go:build !unix

package local

import "time"

func childrenCPU() time.Duration { return 0 }

func selfCPU() time.Duration { return 0 }
