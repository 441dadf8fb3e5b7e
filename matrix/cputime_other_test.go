//go:build !unix

package matrix

import "time"

// processCPU is not measured here: the benchmarks report wall time only.
func processCPU() time.Duration { return 0 }
