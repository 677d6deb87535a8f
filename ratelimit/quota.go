package ratelimit

import (
	"errors"
	"time"
)

// checkQuota checks a QuotaRequest's fields.
func checkQuota(q QuotaRequest) error {
	if q.Account == "" {
		return errors.New("ratelimit: QuotaRequest.Account is empty")
	}
	if q.Fee < 0 {
		return errors.New("ratelimit: QuotaRequest.Fee is negative")
	}
	return nil
}

// refuseQuota decides whether q fits an account that has used reviews
// and summaries and seen users this month (newUser: q.User is not among
// them). If not, it returns the quota it breaks, its size and what q
// asked of it. Giving back never breaks a quota.
func refuseQuota(q QuotaRequest, reviews, summaries, users int64, newUser bool) (limit string, size, want int64) {
	p := q.Plan
	switch {
	case newUser && p.Users > 0 && users+1 > p.Users:
		return LimitUsers, p.Users, 1
	case q.Reviews > 0 && p.Reviews > 0 && reviews+q.Reviews > p.Reviews:
		return LimitReviews, p.Reviews, q.Reviews
	case q.Summaries > 0 && p.Summaries > 0 && summaries+q.Summaries > p.Summaries:
		return LimitSummaries, p.Summaries, q.Summaries
	}
	return "", 0, 0
}

// quotaStatus returns the budgets of a plan after the month's use.
func quotaStatus(p Plan, reviews, summaries, users int64, now time.Time) QuotaStatus {
	reset := NextMonth(now).Sub(now)
	budget := func(limit, used int64) Budget {
		if limit <= 0 {
			return Budget{}
		}
		return Budget{Limit: limit, Remaining: max(limit-used, 0), Reset: reset}
	}
	return QuotaStatus{Reviews: budget(p.Reviews, reviews), Summaries: budget(p.Summaries, summaries), Users: budget(p.Users, users)}
}
