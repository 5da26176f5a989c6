package dev.fencing.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.jspecify.annotations.Nullable;

/** Calls the driver's object behind a proxy, rethrowing its exception unchanged. */
final class Delegation {
  /** What {@link #common} returns for a method it leaves to the caller. */
  static final Object NOT_COMMON = new Object();

  private Delegation() {}

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

  static @Nullable Object invoke(Object target, Method method, Object @Nullable [] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
