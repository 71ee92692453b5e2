//go:build !amd64 || purego

package parse

// prefilter is the portable word pass where no vectorised flag pass is
// written (any GOARCH but amd64) or asked for (the purego build tag).
func prefilter(text string, xidToo bool) bool { return prefilterSWAR(text, xidToo) }
