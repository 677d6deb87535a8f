package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// call sends a request to a server that may still be starting: it tries
// again while the connection is refused, for up to a minute. key, when
// not empty, is the bearer key. It returns the response, its body read
// and closed.
func call(t *testing.T, client *http.Client, method, url, key, body string) (*http.Response, []byte) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := client.Do(req)
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, b
	}
}
