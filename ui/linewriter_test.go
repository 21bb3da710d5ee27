package ui

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

// A line without a newline costs bounded memory: 16 MiB written in 64 KiB
// writes allocate far less than the line (16 KiB of it is kept), and the line
// arrives cut, with a marker.
func TestLineWriterHugeLineBounded(t *testing.T) {
	ch := make(chan []string, 4)
	w := &lineWriter{ctx: context.Background(), ch: ch}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	const total = 16 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range total / len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write([]byte("\nnext\n")); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 { // the line alone would be 16 MiB; slack for other goroutines
		t.Errorf("a %d-byte line allocated %d bytes", total, got)
	}
	lines := <-ch
	if len(lines) != 2 || lines[1] != "next" {
		t.Fatalf("lines: %d, last %q", len(lines), lines[len(lines)-1][max(0, len(lines[len(lines)-1])-40):])
	}
	if want := strings.Repeat("x", maxLineBytes) + " …[line cut: 16760832 more bytes]"; lines[0] != want {
		t.Errorf("cut line ends %q", lines[0][maxLineBytes-8:])
	}
}

// The view keeps at most maxViewBytes of lines, the newest.
func TestTextViewBoundedInBytes(t *testing.T) {
	c := &shared{now: fixedNow, keys: DefaultKeyMap(), st: newStyles()}
	v := newTextView(c, kindLogs, "logs", pick{})
	line := strings.Repeat("y", maxLineBytes)
	batch := make([]string, 100)
	for i := range batch {
		batch[i] = line
	}
	for range 20 { // 2,000 lines of 16 KiB: 32 MiB
		v.onReply(linesReply{lines: batch, more: true}, c)
	}
	v.onReply(linesReply{lines: []string{"newest"}}, c)
	if v.size > maxViewBytes || v.lines[len(v.lines)-1] != "newest" {
		t.Fatalf("view holds %d bytes in %d lines, last %q", v.size, len(v.lines), v.lines[len(v.lines)-1])
	}
}

// BenchmarkLineWriterHugeLine: linear in the bytes written (MB/s stays flat
// whatever the line's length).
func BenchmarkLineWriterHugeLine(b *testing.B) {
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	b.SetBytes(int64(len(chunk)) * 1024)
	for b.Loop() {
		ch := make(chan []string, 1)
		w := &lineWriter{ctx: context.Background(), ch: ch}
		for range 1024 { // a 32 MiB line
			_, _ = w.Write(chunk)
		}
		w.flush()
		<-ch
	}
}
