package dev.fencing.torture;

/** One broken rule found by the {@link Checker}, with the evidence in words. */
record Violation(Rule rule, String detail) {

  /** The rules of a correct history. */
  enum Rule {
    /** Per resource, the tokens of committed writes never decrease in commit order. */
    TOKEN_DECREASED,
    /** No write committed with a token lower than one the resource had already accepted. */
    STALE_WRITE,
    /** No token was returned by two acquisitions (across crashes too). */
    TOKEN_ISSUED_TWICE,
    /** Every token a worker received or wrote with is in the fence's issuance log. */
    ISSUANCE_LOST,
    /** Every write a worker saw acknowledged is in the data, as acknowledged. */
    ACKNOWLEDGED_WRITE_LOST,
    /** Every refusal a worker saw is in the fence's rejection log. */
    REFUSAL_NOT_RECORDED,
    /** No write a worker saw refused is in the data: a refusal means nothing of it committed. */
    REFUSED_WRITE_COMMITTED
  }

  @Override
  public String toString() {
    return rule + ": " + detail;
  }
}
