//go:build !unix

package statefile

const noFollow = 0
