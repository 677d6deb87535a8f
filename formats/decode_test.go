package formats

import (
	"testing"
)

func TestPathAt(t *testing.T) {
	data := []byte(`{"a":[{"b":1},{"c":{"d":[true,"x"]}}],"e":null}`)
	for _, tc := range []struct {
		at   string // the text just before the offset
		want string
	}{
		{`{"a":[`, "a"},
		{`{"a":[{`, "a[0]"},
		{`{"a":[{"b":1`, "a[0].b"},
		{`{"a":[{"b":1},{"c":{"d":[true`, "a[1].c.d[0]"},
		{`{"a":[{"b":1},{"c":{"d":[true,"x"`, "a[1].c.d[1]"},
		{`{"a":[{"b":1},{"c":{"d":[true,"x"]}}],"e":null`, "e"},
	} {
		if got := pathAt(data, int64(len(tc.at))); got != tc.want {
			t.Errorf("pathAt(%q) = %q, want %q", tc.at, got, tc.want)
		}
	}
}
