package redisaccount_test

import (
	"fmt"
	"testing"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/account/accounttest"
	"github.com/inferkit/inferkit/account/redisaccount"
	"github.com/inferkit/inferkit/internal/redistest"
)

func TestRedis(t *testing.T) {
	sock := redistest.Start(t)
	rdb := redistest.Client(t, sock)
	n := 0
	accounttest.Run(t, func(t *testing.T) account.Store {
		n++ // a fresh prefix per subtest: an empty store
		s, err := redisaccount.New(redisaccount.Config{Client: rdb, Prefix: fmt.Sprintf("test%d:", n)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
