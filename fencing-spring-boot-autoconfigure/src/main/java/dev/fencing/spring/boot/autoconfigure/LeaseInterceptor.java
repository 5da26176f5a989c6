package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.FencingScope;
import dev.fencing.jdbc.Lease;
import dev.fencing.jdbc.LeaseClient;
import dev.fencing.spring.boot.LeaseNotAcquiredException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.Optional;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Around a {@code @WithLease} method: acquire, bind, run, then unbind and release — at once when no
 * transaction is active on the thread, else when the transaction completed ({@link
 * DeferredRelease}), so the binding always covers the commit.
 */
final class LeaseInterceptor implements MethodInterceptor {
  private final LeaseAttributeSource attributes;
  private final ObjectProvider<LeaseClient> leases;
  private final ObjectProvider<FencingProperties> properties;
  private final HeldLeases held;

  LeaseInterceptor(
      LeaseAttributeSource attributes,
      ObjectProvider<LeaseClient> leases,
      ObjectProvider<FencingProperties> properties,
      HeldLeases held) {
    this.attributes = attributes;
    this.leases = leases;
    this.properties = properties;
    this.held = held;
  }

  @Override
  public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
    Object target = invocation.getThis();
    Class<?> targetClass =
        target == null
            ? invocation.getMethod().getDeclaringClass()
            : AopUtils.getTargetClass(target);
    LeaseAttribute attribute = attributes.get(invocation.getMethod(), targetClass);
    if (attribute == null) {
      return invocation.proceed();
    }
    String resource = attribute.resource(target, invocation.getArguments());
    if (Fencing.current().token(resource).isPresent()) {
      return invocation.proceed(); // re-entrant: the outer lease covers this call
    }
    FencingProperties.Lease defaults = properties.getObject().lease();
    Optional<Lease> acquired = acquire(attribute, resource, defaults);
    if (acquired.isEmpty()) {
      return attribute.skipped();
    }
    Lease lease = acquired.get();
    FencingScope scope;
    try {
      scope = Fencing.bind(lease);
    } catch (RuntimeException e) {
      lease.close();
      throw e;
    }
    held.add(lease);
    boolean inTransaction = TransactionSynchronizationManager.isSynchronizationActive();
    try {
      return invocation.proceed();
    } finally {
      if (inTransaction) {
        DeferredRelease.register(scope, lease, held);
      } else {
        DeferredRelease.end(scope, lease, held);
      }
    }
  }

  private Optional<Lease> acquire(
      LeaseAttribute attribute, String resource, FencingProperties.Lease defaults) {
    LeaseClient client = leases.getObject();
    Duration ttl = attribute.ttl(defaults.ttl());
    try {
      switch (attribute.whenHeld()) {
        case WAIT -> {
          Duration wait = attribute.maxWait(defaults.maxWait());
          try {
            return Optional.of(client.acquire(resource, ttl, wait));
          } catch (SQLTimeoutException e) {
            throw new LeaseNotAcquiredException(resource, wait, e);
          }
        }
        case SKIP -> {
          return client.tryAcquire(resource, ttl);
        }
        default -> {
          Optional<Lease> lease = client.tryAcquire(resource, ttl);
          if (lease.isEmpty()) {
            throw new LeaseNotAcquiredException(resource, Duration.ZERO, null);
          }
          return lease;
        }
      }
    } catch (SQLException e) {
      throw FencingExceptionTranslation.translate("acquire the lease on " + resource, e);
    }
  }
}
