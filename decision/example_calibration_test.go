package decision_test

import (
	"fmt"
	"log"

	"github.com/inferkit/inferkit/decision"
)

func ExampleCalibrate() {
	// A yes-or-no model that says 90% when it is right 70% of the time.
	// Each example holds its probabilities at temperature 1, yes then no,
	// and the index of the right answer. In practice both sets come from
	// an Evaluator's answers to labelled questions, split in two.
	overconfident := func() []decision.Example {
		var xs []decision.Example
		for i := range 10 {
			answer := 0
			if i >= 7 {
				answer = 1
			}
			xs = append(xs, decision.Example{Probabilities: []float64{0.9, 0.1}, Answer: answer})
		}
		return xs
	}
	r, err := decision.Calibrate(overconfident(), overconfident())
	if err != nil {
		log.Fatal(err)
	}
	// The fit makes 0.9 against 0.1 read as 0.7 against 0.3: it solves
	// ln(0.9/0.1)/T = ln(0.7/0.3), so T = ln 9 / ln(7/3) ≈ 2.593.
	fmt.Printf("temperature %.3f\n", r.Temperature)
	for _, m := range []decision.Metrics{r.Before, r.After} {
		fmt.Printf("accuracy %.2f, log loss %.3f, Brier %.3f, ECE %.3f\n", m.Accuracy, m.LogLoss, m.Brier, m.ECE)
	}
	// Output:
	// temperature 2.593
	// accuracy 0.70, log loss 0.765, Brier 0.500, ECE 0.200
	// accuracy 0.70, log loss 0.611, Brier 0.420, ECE 0.000
}
