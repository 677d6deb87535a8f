package console

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/inferkit/inferkit/account"
	"github.com/inferkit/inferkit/policy"
	"github.com/inferkit/inferkit/ratelimit"
)

// page is what the layout of every page needs.
type page struct {
	Title  string
	Script template.JS
	Style  template.CSS
	// CodeReview is whether the console serves the code-review pages.
	CodeReview bool
}

// page returns the layout's data of a page titled title.
func (c *Console) page(title string) page {
	return page{Title: title, Script: c.script, Style: c.style, CodeReview: c.codeReview != nil}
}

// loginPage is the sign-in form.
type loginPage struct {
	page
	CSRF  string
	Owner string
	Error string
	// SSO names the single sign-on providers offered.
	SSO []string
}

// errorPage says what went wrong.
type errorPage struct {
	page
	Status  int
	Message string
}

// keysPage is the account's page: its keys, tier, credits, usage and plan.
type keysPage struct {
	page
	CSRF    string
	Account accountView
	Keys    []keyView
	// NewKey is the key just created, whose secret the page shows once.
	NewKey *newKey
	// Usage is nil when the console has no UsageSource.
	Usage            *usageView
	UsageUnavailable bool
	Error            string
}

// newKey is a key just created, with its secret.
type newKey struct {
	Name, Secret string
}

// keyView is a row of the keys table.
type keyView struct {
	ID, Name, Hint, Created, LastUsed string
}

func viewKey(k account.Key) keyView {
	v := keyView{ID: k.ID, Name: k.Name, Hint: k.Hint, Created: day(k.Created), LastUsed: "Never"}
	if !k.LastUsed.IsZero() {
		v.LastUsed = minute(k.LastUsed)
	}
	return v
}

// accountView is the account's tier, credits and plan.
type accountView struct {
	Name, Owner string
	// Member is who signed in by single sign-on; "" for the owner.
	Member string
	Tier   string
	// Limits describes the tier's rates per minute; "" for none.
	Limits  string
	Credits string
	// Balance is what is left of the credits under prepaid billing; ""
	// under postpaid billing, which draws nothing from them.
	Balance string
	Plan    string
	// PlanState is "active", "trialing" or "expired".
	PlanState string
	// PlanNote says what the state means: the trial's end, the price.
	PlanNote string
}

func viewAccount(a account.Account, billing account.Billing, now time.Time) accountView {
	t := a.Tier()
	v := accountView{Name: a.Name, Owner: a.Owner, Tier: t.Name, Credits: dollars(a.Credits)}
	if billing == account.Prepaid {
		v.Balance = dollars(a.Balance())
	}
	var rates []string
	for _, r := range []struct {
		n    int64
		unit string
	}{{t.Requests, "requests"}, {t.InputTokens, "input tokens"}, {t.OutputTokens, "output tokens"}} {
		if r.n > 0 {
			rates = append(rates, count(r.n)+" "+r.unit)
		}
	}
	switch {
	case t.Name == "":
		v.Tier, v.Limits = "None", "buy credits to unlock the first tier"
	case len(rates) > 0:
		v.Limits = strings.Join(rates, ", ") + " per minute"
	default:
		v.Limits = "No rate limits"
	}
	plan, state := a.PlanAt(now)
	v.Plan, v.PlanState = title(plan.Name), string(state)
	switch state {
	case account.PlanTrialing:
		v.PlanNote = "Trial ends " + minute(a.Plan.TrialEnds) + "."
	case account.PlanExpired:
		v.PlanNote = "The trial of " + title(a.Plan.Plan) + " ended " + minute(a.Plan.TrialEnds) + "."
	default:
		if plan.Price > 0 {
			v.PlanNote = dollars(plan.Price) + " a month."
		}
	}
	return v
}

// usageView is this month's usage and spend against the tier's cap.
type usageView struct {
	Month                                                  string
	Requests, InputTokens, CachedInputTokens, OutputTokens string
	Spent                                                  string
	// Held is the part of Spent that requests in flight hold; "" for
	// none.
	Held string
	// Cap is the tier's monthly maximum; "" for none.
	Cap string
	// Percent is Spent of Cap, 0 to 100, for the meter.
	Percent int
	// Resets is when the month ends.
	Resets string
	// PlanFee is the code-review plan's price charged this month, part
	// of Spent; "" for none.
	PlanFee string
}

func viewUsage(u ratelimit.MonthUsage, t ratelimit.Tier, now time.Time) usageView {
	v := usageView{
		Month: u.Month, Requests: count(u.Requests), InputTokens: count(u.InputTokens),
		CachedInputTokens: count(u.CachedInputTokens), OutputTokens: count(u.OutputTokens), Spent: dollars(u.Spent),
	}
	if v.Month == "" {
		v.Month = ratelimit.Month(now)
	}
	if u.Held > 0 {
		v.Held = dollars(u.Held)
	}
	if u.PlanFee > 0 {
		v.PlanFee = dollars(u.PlanFee)
	}
	if t.MaxMonthlySpend > 0 {
		v.Cap = dollars(t.MaxMonthlySpend)
		v.Percent = int(min(100, max(0, u.Spent*100/t.MaxMonthlySpend)))
	}
	v.Resets = minute(ratelimit.NextMonth(now))
	return v
}

// dollars formats m with a dollar sign and at least two decimals, and all
// the decimals a small amount needs: "$12.50", "$1,000.00", "$0.000125".
func dollars(m ratelimit.Money) string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	frac := strings.TrimRight(fmt.Sprintf("%09d", int64(m%ratelimit.Dollar)), "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return sign + "$" + count(int64(m/ratelimit.Dollar)) + "." + frac
}

// count formats n with thousands separators: "30,000".
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// title capitalises a plan's name: "team" is "Team"; "" is "Free".
func title(name string) string {
	if name == "" {
		name = policy.Free.Name
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// day formats a date in UTC.
func day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// minute formats a time in UTC, to the minute.
func minute(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
