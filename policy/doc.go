// Package policy is the hosted Inference API's product: the tables of
// spec/inference-api.md as data, for the mechanism packages that take
// them. It is pure Go.
//
// Where each table comes from, all in the spec's "Limits" section:
//   - the tier ladder (Tiers: Default, Tier2, Tier3, and Unlimited for
//     operators) is its "Rate limits" table: requests, input and output
//     tokens per minute, the credits that unlock each tier and the
//     maximum monthly spend;
//   - the code-review plans (Plans: Free, Team, Growth, Enterprise), their
//     features and TrialLength are its "Code-review plan quotas" table;
//   - the catalog's entries and prices (Model, for the ids Core25Pro to
//     CoreMini and SystemOne340M to SystemOne9B) are its "Model sizes and
//     prices" and "Decision model prices" tables, with the choices the
//     spec leaves open written beside each.
//
// # Mechanism and policy
//
// The packages that enforce these tables hold none of them: ratelimit
// limits a request by the Tier it is given and counts quotas by the
// Plan it is given, and defines Ladder and Plans, the shapes of a
// product's tables; catalog lists and prices the Models it is given;
// account chooses an account's tier and plan from the Ladder and Plans
// of its Config, and takes Tiers() and Plans() when those are zero.
// The imports therefore point one way, from policy down to ratelimit and
// catalog: the types are the mechanism's vocabulary, and this package
// only fills them in. An embedding program that sells something else
// builds its own ratelimit.Ladder, ratelimit.Plans and []catalog.Model
// and never imports this package, and changing a price here touches
// no mechanism.
//
// Every table is returned as a new value (Tiers, Plans, Model) or is a
// value without shared parts (the Tier variables), so that a caller
// that changes its copy changes nobody else's. The Plan variables share
// their Features slices: copy one before appending to it.
package policy
