package dev.fencing.jdbc;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.lang.reflect.UndeclaredThrowableException;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/**
 * Calls the driver's object behind a proxy, rethrowing its exception unchanged. The connection, its
 * statements and its result sets are plain classes ({@link DelegatingConnection}, {@link
 * DelegatingStatement} and its subclasses, {@link DelegatingResultSet}); database metadata and the
 * {@code PGConnection} view are still proxies.
 */
final class Delegation {
  /** What {@link #common} returns for a method it leaves to the caller. */
  static final Object NOT_COMMON = new Object();

  // The proxy class of each interface proxied, made once: Proxy.newProxyInstance finds it again and
  // walks the caller's stack at every call, which was a visible part of the wrapper's client CPU.
  private static final ClassValue<Constructor<?>> PROXIES =
      new ClassValue<>() {
        @Override
        protected Constructor<?> computeValue(Class<?> type) {
          Object sample =
              Proxy.newProxyInstance(
                  Delegation.class.getClassLoader(),
                  new Class<?>[] {type},
                  (self, method, args) -> null);
          try {
            Constructor<?> c = sample.getClass().getConstructor(InvocationHandler.class);
            c.setAccessible(true); // public, in an exported package: no access check per call
            return c;
          } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no proxy constructor for " + type, e);
          }
        }
      };

  private Delegation() {}

  /**
   * A proxy implementing {@code type} that hands every call to {@code handler}: what {@code
   * Proxy.newProxyInstance} with the library's class loader returns, without its per-call lookups.
   */
  static <T> T proxy(Class<T> type, InvocationHandler handler) {
    try {
      return type.cast(PROXIES.get(type).newInstance(handler));
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(cause);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot make a proxy of " + type, e);
    }
  }

  /**
   * Answers the methods all our proxies answer alike: {@code isWrapperFor} (the proxy, then the
   * driver's object), and identity-based {@code equals}, {@code hashCode}, {@code toString}.
   */
  static @Nullable Object common(Object self, Object raw, Method method, Object @Nullable [] args)
      throws Throwable {
    switch (method.getName()) {
      case "isWrapperFor":
        return ((Class<?>) args[0]).isInstance(self) || (boolean) invoke(raw, method, args);
      case "equals":
        return self == args[0];
      case "hashCode":
        return System.identityHashCode(self);
      case "toString":
        return "Fenced[" + raw + "]";
      default:
        return NOT_COMMON;
    }
  }

  /**
   * {@code e}, thrown by a call made for a JDBC method that declares {@code SQLException}, as that
   * method throws it: a {@code SQLException} as it is (returned, for the caller to throw),
   * unchecked ones thrown as they are, any other wrapped as a proxy would have.
   */
  static SQLException rethrown(Throwable e) {
    if (e instanceof SQLException s) {
      return s;
    }
    if (e instanceof RuntimeException r) {
      throw r;
    }
    if (e instanceof Error err) {
      throw err;
    }
    throw new UndeclaredThrowableException(e);
  }

  static @Nullable Object invoke(Object target, Method method, Object @Nullable [] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
