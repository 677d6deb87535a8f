package hub

import (
	"testing"
	"time"
)

func TestRateMeter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var m rateMeter
	m.add(t0, 1<<20)
	if m.rate != 0 {
		t.Errorf("rate after one sample %v, want 0 (not known yet)", m.rate)
	}
	m.add(t0.Add(time.Second), 1<<20)
	if m.rate != 1<<20 {
		t.Errorf("rate %v after 1 MiB more in a second, want %d", m.rate, 1<<20)
	}
	// A new window starts past 3 seconds: the rate follows the speed.
	m.add(t0.Add(3*time.Second), 4<<20)
	m.add(t0.Add(5*time.Second), 1<<20)
	if m.rate != float64(1<<20)/2 {
		t.Errorf("rate %v in the second window, want %d", m.rate, 1<<19)
	}
}
