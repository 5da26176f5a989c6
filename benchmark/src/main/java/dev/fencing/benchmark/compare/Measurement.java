package dev.fencing.benchmark.compare;

import dev.fencing.benchmark.compare.Approach.Outcome;
import java.math.BigInteger;
import java.util.List;
import java.util.Optional;

/**
 * What one play of the {@link Scenario} observed.
 *
 * @param tokens the token of every acquisition, in acquisition order: client 1's, client 2's, then
 *     {@link Scenario#MORE_ACQUISITIONS} more; empty where the approach issued none
 * @param stale what happened to client 1's write after its lease had expired
 * @param balance the account balance afterwards
 * @param intactBalance the balance if only client 2's withdrawal counted
 * @param lostUpdateBalance the balance if client 1's stale write overwrote client 2's
 * @param writers the clients whose writes committed, in commit order
 */
record Measurement(
    List<Optional<BigInteger>> tokens,
    Outcome stale,
    long balance,
    long intactBalance,
    long lostUpdateBalance,
    List<String> writers) {

  Measurement {
    tokens = List.copyOf(tokens);
    writers = List.copyOf(writers);
  }

  /** Every acquisition got a token, each greater than the one before. */
  boolean monotonic() {
    if (tokens.stream().anyMatch(Optional::isEmpty)) {
      return false;
    }
    for (int i = 1; i < tokens.size(); i++) {
      if (tokens.get(i).orElseThrow().compareTo(tokens.get(i - 1).orElseThrow()) <= 0) {
        return false;
      }
    }
    return true;
  }

  /** Whether the stale write was refused and nothing of it committed. */
  boolean staleWriteBlocked() {
    return !stale.isAccepted() && !writers.contains("client-1");
  }

  /** Whether the account holds anything but the result of client 2's withdrawal alone. */
  boolean corrupted() {
    return balance != intactBalance;
  }

  /** The monotonic-token cell: the verdict and what it rests on. */
  String tokenEvidence() {
    long issued = tokens.stream().filter(Optional::isPresent).count();
    if (issued == 0) {
      return "No: no token issued (" + tokens.size() + " acquisitions)";
    }
    if (monotonic()) {
      return "Yes: "
          + tokens.size()
          + " acquisitions, "
          + tokens.get(0).orElseThrow()
          + " < "
          + tokens.get(1).orElseThrow()
          + " < … < "
          + tokens.get(tokens.size() - 1).orElseThrow();
    }
    int down = 0;
    for (int i = 1; i < tokens.size(); i++) {
      Optional<BigInteger> before = tokens.get(i - 1);
      Optional<BigInteger> after = tokens.get(i);
      if (before.isEmpty() || after.isEmpty() || after.get().compareTo(before.get()) <= 0) {
        down++;
      }
    }
    boolean wide = tokens.stream().flatMap(Optional::stream).anyMatch(t -> t.bitLength() > 63);
    return "No: "
        + tokens.size()
        + (wide ? " random 128-bit values, " : " acquisitions, ")
        + down
        + " of "
        + (tokens.size() - 1)
        + " not greater than the one before";
  }

  /** The measured stale-write cell. */
  String staleEvidence() {
    if (staleWriteBlocked()) {
      return "Yes: refused by PostgreSQL, " + stale.refusal();
    }
    if (!stale.isAccepted()) {
      return "No: refused (" + stale.refusal() + ") yet committed";
    }
    int zombie = writers.indexOf("client-1");
    int rightful = writers.indexOf("client-2");
    return zombie >= 0 && rightful > zombie
        ? "No: client 1's stale write committed (then client 2's)"
        : "No: client 1's stale write committed";
  }

  /** The data cell: the balance and whose writes it holds. */
  String dataEvidence() {
    String log = "writes committed: " + String.join(", ", writers);
    if (!corrupted()) {
      return "Intact: balance " + balance + " (" + log + ")";
    }
    return "Corrupted: balance "
        + balance
        + ", should be "
        + intactBalance
        + (balance == lostUpdateBalance ? " — client 2's withdrawal lost" : "")
        + " ("
        + log
        + ")";
  }
}
