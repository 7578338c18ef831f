// Package rsstrim trims the process's resident set: it gives back the
// pages of the program's own code and read-only data that the kernel
// mapped while the program started and that it no longer uses.
//
// Why they are many: Go runs the initialisation of every linked package
// at start (about 260 of them here, spread over the whole 17 MB of code),
// and on each page fault in a file mapping the kernel maps up to 64 KiB
// around the page that faulted (fault-around), from the page cache. So a
// start maps nearly all the code and much of the read-only data, 27 MB
// of the agents binary, although an idle server touches none of it and a
// request a few megabytes. These pages are clean and shared with the page
// cache, but they count in the process's RSS for its whole life.
//
// madvise(MADV_RANDOM) does not help: it stops read-ahead from the file,
// not fault-around, which maps pages already in the page cache
// (measured on Linux 6.18: 215 reads 256 KiB apart in a cached file's
// mapping mapped 64 KiB each with or without it). MADV_DONTNEED over the
// executable's read-only mappings unmaps them; what runs afterwards
// faults its pages in again from the page cache, so the process keeps
// only what it uses after the call. See BENCHMARKS.md, "Start-up and
// idle memory: the binary's own pages".
package rsstrim
