package dev.fencing.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.core.annotation.AliasFor;

/**
 * Runs the method holding a fencing lease on a resource, with the lease's token bound on the
 * calling thread ({@link dev.fencing.jdbc.Fencing#bind}): every write the method makes through the
 * application's (fenced) {@code DataSource} — JDBC, JPA entities marked {@code @Fenced}, Spring
 * Data repositories — is checked by PostgreSQL, and refused once another holder took the lease
 * over.
 *
 * <pre>{@code
 * @WithLease("ledger")                                   // one resource
 * @Transactional
 * public void post(Entry entry) { ... }
 *
 * @WithLease(value = "account:#{#number}", whenHeld = WhenHeld.WAIT, maxWait = "10s")
 * @Transactional
 * public void deposit(String number, long amount) { ... }  // one resource per account
 * }</pre>
 *
 * <p><b>The resource</b> is the {@link #value()}: a fixed name, or a template whose {@code #{...}}
 * parts are SpEL expressions over the method's arguments ({@code #name} when compiled with {@code
 * -parameters}, else {@code #p0}, {@code #a0}) and beans ({@code @bean}); {@code ${...}}
 * placeholders are resolved first. A fixed name is checked at start-up, an evaluated one at each
 * call ({@link dev.fencing.jdbc.FencingToken#requireValidResource}); an expression that evaluates
 * to null is refused.
 *
 * <p><b>With {@code @Transactional}.</b> The binding covers the transaction's commit (a JPA flush
 * at commit is fenced too) whichever advice runs first: by default this advice runs outside the
 * transaction (it is ordered before Spring's transaction advice, so the lease is taken before the
 * transaction starts and released after it ended); when it runs inside a transaction (the caller's,
 * or a transaction advice ordered first), the token stays bound and the lease held until that
 * transaction completed.
 *
 * <p><b>Nesting.</b> A method for a resource whose token is already bound on the thread runs in the
 * outer lease (re-entrant). The method must do its work on the calling thread: methods returning a
 * {@code CompletionStage}, {@code Future} or reactive type are refused at start-up. Work it hands
 * to Boot's task executor ({@code @Async}) carries its tokens, with their leases: wait for it
 * inside the method, since a task still writing after the method returned (the lease released) is
 * refused.
 *
 * <p><b>Lease settings</b> default to {@code fencing.lease.*}: the lease is renewed in the
 * background while the method runs ({@code fencing.lease.keep-alive}), so {@link #ttl()} bounds how
 * long a stalled instance (a GC pause, a partition) keeps others waiting, not how long the method
 * may run.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface WithLease {
  /**
   * The resource to lease: a name, or a template with {@code #{...}} SpEL parts.
   *
   * @return the resource name or template
   */
  @AliasFor("resource")
  String value() default "";

  /**
   * Alias of {@link #value()}.
   *
   * @return the resource name or template
   */
  @AliasFor("value")
  String resource() default "";

  /**
   * How long the lease is granted at each acquisition and renewal, e.g. {@code "30s"} or {@code
   * "PT30S"}, 1 ms to 7 days; empty: {@code fencing.lease.ttl}.
   *
   * @return the lease's time to live
   */
  String ttl() default "";

  /**
   * With {@link WhenHeld#WAIT}, how long to wait for the lease, e.g. {@code "10s"}, not negative;
   * empty: {@code fencing.lease.max-wait}.
   *
   * @return the longest wait
   */
  String maxWait() default "";

  /**
   * What happens when another holder has the lease.
   *
   * @return the choice; default {@link WhenHeld#THROW}
   */
  WhenHeld whenHeld() default WhenHeld.THROW;

  /** What a {@link WithLease} method does when another holder has the lease. */
  enum WhenHeld {
    /** Do not run the method: throw {@link LeaseNotAcquiredException}. */
    THROW,
    /**
     * Do not run the method: return {@code null} ({@code Optional.empty()} for an {@code Optional};
     * a method returning a primitive other than {@code void} cannot skip and is refused at
     * start-up).
     */
    SKIP,
    /**
     * Wait up to {@link WithLease#maxWait()} for the lease (woken by its release, or by its expiry
     * on the database clock), then throw {@link LeaseNotAcquiredException}.
     */
    WAIT
  }
}
