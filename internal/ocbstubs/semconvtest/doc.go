// Package semconvtest is an empty stand-in; see ../README.md.
package semconvtest
