package decision

import (
	"strings"
	"testing"
)

func TestJSONText(t *testing.T) {
	for _, c := range []struct {
		in, indented, line string
	}{
		{`{}`, `{}`, `{}`},
		{`[]`, `[]`, `[]`},
		{` { "b" : 1 , "a":[true,null, "x"] } `,
			"{\n  \"b\": 1,\n  \"a\": [\n    true,\n    null,\n    \"x\"\n  ]\n}",
			`{"b": 1, "a": [true, null, "x"]}`},
		// Keys keep their order; numbers their spelling; strings lose
		// needless escapes.
		{`{"z":1.50e3,"é":"\u00e9 <b>&","q":"a\"b\\c\n"}`,
			"{\n  \"z\": 1.50e3,\n  \"é\": \"é <b>&\",\n  \"q\": \"a\\\"b\\\\c\\n\"\n}",
			`{"z": 1.50e3, "é": "é <b>&", "q": "a\"b\\c\n"}`},
		{`[{"a":{}},[[]],{"b":[1,{"c":2}]}]`,
			"[\n  {\n    \"a\": {}\n  },\n  [\n    []\n  ],\n  {\n    \"b\": [\n      1,\n      {\n        \"c\": 2\n      }\n    ]\n  }\n]",
			`[{"a": {}}, [[]], {"b": [1, {"c": 2}]}]`},
	} {
		got, err := jsonText([]byte(c.in), "  ", 1000)
		if err != nil || got != c.indented {
			t.Errorf("%s indented:\n%s\nerror %v, want\n%s", c.in, got, err, c.indented)
		}
		got, err = jsonText([]byte(c.in), "", 1000)
		if err != nil || got != c.line {
			t.Errorf("%s on a line: %s, error %v, want %s", c.in, got, err, c.line)
		}
	}
}

// Indenting a deeply nested value would take the square of its size: the
// text stops at the limit.
func TestJSONTextLimit(t *testing.T) {
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	if _, err := jsonText([]byte(deep), "  ", MaxStateChars); err == nil || !strings.Contains(err.Error(), "more than 100000 characters") {
		t.Errorf("5,000 nested arrays: error %v", err)
	}
	if got, err := jsonText([]byte(`["ab"]`), "", 6); err != nil || got != `["ab"]` {
		t.Errorf("at the limit: %q, %v", got, err)
	}
	if _, err := jsonText([]byte(`["abc"]`), "", 6); err == nil {
		t.Error("over the limit by one: no error")
	}
}
