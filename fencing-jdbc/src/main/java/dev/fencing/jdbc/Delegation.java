package dev.fencing.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.jspecify.annotations.Nullable;

/** Calls the driver's object behind a proxy, rethrowing its exception unchanged. */
final class Delegation {
  private Delegation() {}

  static @Nullable Object invoke(Object target, Method method, Object @Nullable [] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
