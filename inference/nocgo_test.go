//go:build !cgo

package inference_test

const cgoBuild = false
