package formats_test

import (
	"fmt"

	"github.com/inferkit/inferkit/formats"
	"github.com/inferkit/inferkit/formats/messages"
)

// A parse error is a 400 in each style's shape, naming the parameter.
func ExampleWriteError() {
	_, err := messages.Parse([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":3}`))
	e := formats.ErrorOf(err)
	fmt.Println(e.Status, e.Param)
	fmt.Println(string(e.Body(formats.StyleMessages)))
	// Output:
	// 400 temperature
	// {"type":"error","error":{"type":"invalid_request_error","message":"temperature must be between 0 and 2, got 3","error":{"type":"invalid_request_error","message":"temperature must be between 0 and 2, got 3"}}}
}
