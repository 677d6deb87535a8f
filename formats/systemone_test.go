package formats

import (
	"fmt"
	"testing"
)

func TestParamPath(t *testing.T) {
	for _, c := range []struct {
		param, want string
	}{
		{"model", "[model]"},
		{"images[1]", "[images 1]"},
		{"messages[0].content[2].text", "[messages 0 content 2 text]"},
		{"tools[3].function.parameters", "[tools 3 function parameters]"},
		{"a[x]", "[a x]"},
	} {
		if got := fmt.Sprint(paramPath(c.param)); got != c.want {
			t.Errorf("%q: %s, want %s", c.param, got, c.want)
		}
	}
}
