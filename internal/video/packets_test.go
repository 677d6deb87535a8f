package video

import (
	"strings"
	"testing"
	"time"
)

func TestPacketListDuration(t *testing.T) {
	const head = "#software: Lavf59.27.100\n#tb 0: 1/1000\n#media_type 0: video\n"
	for _, tc := range []struct {
		name, list string
		want       time.Duration
		err        string
	}{
		{"durations", head + "0, 0, 0, 100, 5, 0x1\n0, 100, 100, 100, 5, 0x1\n0, 200, 200, 100, 5, 0x1, F=0x0\n", 300 * time.Millisecond, ""},
		{"reordered", head + "0, -100, 0, 100, 5, 0x1\n0, 0, 200, 100, 5, 0x1\n0, 100, 100, 100, 5, 0x1\n", 300 * time.Millisecond, ""},
		{"no durations: last lasts the average", head + "0, 0, 1000, 0, 5, 0x1\n0, 1, 1100, 0, 5, 0x1\n0, 2, 1300, 0, 5, 0x1\n", 450 * time.Millisecond, ""},
		{"no timestamps", head + "0, -9223372036854775808, -9223372036854775808, 0, 5, 0x1\n", 0, ""},
		{"one frame", head + "0, 0, 0, 0, 5, 0x1\n", 0, ""},
		{"time base in 90 kHz", "#tb 0: 1/90000\n0, 0, 0, 3000, 5, 0x1\n0, 3000, 3000, 3000, 5, 0x1\n", 66666666 * time.Nanosecond, ""},
		{"overflowing end", head + "0, 0, 0, 1, 5, 0x1\n0, 1, 9223372036854775807, 9223372036854775807, 5, 0x1\n", 0, "timestamps span"},
		{"span too long", head + "0, 0, -9000000000000, 1, 5, 0x1\n0, 1, 9000000000000, 1, 5, 0x1\n", 0, "timestamps span"},
		{"bad time base", "#tb 0: 0/0\n", 0, "bad time base"},
		{"bad packet", head + "0, x, y, z, 5, 0x1\n", 0, "listed a packet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p packetList
			// Written in uneven pieces, as a pipe delivers it.
			for s := tc.list; s != ""; {
				n := min(len(s), 7)
				p.Write([]byte(s[:n]))
				s = s[n:]
			}
			err := p.err
			var d time.Duration
			if err == nil {
				d, err = p.duration()
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one that says %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d != tc.want {
				t.Fatalf("duration %v, want %v", d, tc.want)
			}
		})
	}
}
