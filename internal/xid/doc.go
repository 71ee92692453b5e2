// Package xid recognises NVIDIA driver Xid lines in kernel log text and
// describes Xid codes from NVIDIA's Xid catalog.
//
// ParseLine accepts one kernel log line in any of the usual prefix forms
// (bare /dev/kmsg text, raw dmesg, dmesg -T, syslog/kern.log with or without
// the kernel's [uptime], journalctl -k, RFC 3339 stamped syslog) and returns
// the Xid it reports. It rejects other lines after one substring search, so
// callers can run it on every log line.
//
// Lookup maps an Xid code to its entry in NVIDIA's Xid catalog (every code
// the catalog publishes, 1-172): NVIDIA's mnemonic, description and immediate
// action, verbatim, and our likely origin, log severity, and whether the Xid
// marks a fault that makes a nearby out-of-memory error something other than
// a capacity problem. catalog.go names the sources and the rules.
//
// The package is pure standard library and safe for concurrent use.
package xid
