package execute

import (
	"bytes"
	"io"
	"strconv"
	"sync"
)

// markerWriter passes a command's stdout through and takes out the end
// marker line "<marker><status>\n" (or "\r\n" through a terminal). It holds
// back only a tail that could still become the marker, so output streams.
type markerWriter struct {
	mu     sync.Mutex
	w      io.Writer
	marker []byte
	buf    []byte
	found  bool
	code   int
}

func (m *markerWriter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.found {
		return m.pass(p, len(p))
	}
	m.buf = append(m.buf, p...)
	if i := bytes.Index(m.buf, m.marker); i >= 0 {
		rest := m.buf[i+len(m.marker):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		end := j
		if end < len(rest) && rest[end] == '\r' {
			end++
		}
		if end >= len(rest) {
			// Status digits or the line end may still be on the way.
			if _, err := m.pass(m.buf[:i], 0); err != nil {
				return 0, err
			}
			m.buf = append([]byte(nil), m.buf[i:]...)
			return len(p), nil
		}
		code, err := strconv.Atoi(string(rest[:j]))
		if rest[end] == '\n' && err == nil {
			m.found, m.code = true, code
			before, after := m.buf[:i], rest[end+1:]
			m.buf = nil
			if _, err := m.pass(before, 0); err != nil {
				return 0, err
			}
			return m.pass(after, len(p))
		}
		// Not a marker line after all: let it through.
	}
	keep := partialSuffix(m.buf, m.marker)
	out := m.buf[:len(m.buf)-keep]
	m.buf = append([]byte(nil), m.buf[len(m.buf)-keep:]...)
	return m.pass(out, len(p))
}

func (m *markerWriter) pass(b []byte, n int) (int, error) {
	if len(b) > 0 && m.w != nil {
		if _, err := m.w.Write(b); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// flush writes whatever was held back; call it when the stream ended.
func (m *markerWriter) flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pass(m.buf, 0) //nolint:errcheck // best effort at the end
	m.buf = nil
}

func (m *markerWriter) exitCode() (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.code, m.found
}

// partialSuffix is the length of the longest suffix of b that is a proper
// prefix of marker (or the marker followed by an incomplete status).
func partialSuffix(b, marker []byte) int {
	for n := min(len(marker)-1, len(b)); n > 0; n-- {
		if bytes.Equal(b[len(b)-n:], marker[:n]) {
			return n
		}
	}
	return 0
}
