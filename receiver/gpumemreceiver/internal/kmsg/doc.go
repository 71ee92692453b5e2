// Package kmsg reads kernel log records in the /dev/kmsg format.
//
// ParseRecord decodes one record, "prio,seq,usec,flags[,…];text\n" followed
// by optional " KEY=value\n" dictionary lines. Reader delivers records from
// /dev/kmsg itself (one record per read, starting at the end of the kernel's
// buffer by default) or from a regular file or FIFO of newline-separated
// records, which it follows like tail -f; that second form serves replays
// and tests.
//
// Record times are microseconds since boot; BootTime gives the wall-clock
// boot time to convert them with Record.Time.
package kmsg
