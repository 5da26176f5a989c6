package dev.fencing.spring.boot.autoconfigure;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.jdbc.support.JdbcAccessor;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * Puts refusal translation in front of the translators of {@code JdbcTemplate} (and so {@code
 * NamedParameterJdbcTemplate}, {@code JdbcClient}), {@code JdbcTransactionManager} and {@code
 * JpaTransactionManager} beans.
 */
final class FencingTranslationPostProcessor implements BeanPostProcessor {
  private static final boolean JPA =
      ClassUtils.isPresent(
          "org.springframework.orm.jpa.JpaTransactionManager",
          FencingTranslationPostProcessor.class.getClassLoader());

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof JdbcAccessor accessor
        && !(accessor.getExceptionTranslator() instanceof FencingExceptionTranslation.Jdbc)) {
      accessor.setExceptionTranslator(
          new FencingExceptionTranslation.Jdbc(accessor.getExceptionTranslator()));
    } else if (bean instanceof JdbcTransactionManager manager
        && !(manager.getExceptionTranslator() instanceof FencingExceptionTranslation.Jdbc)) {
      manager.setExceptionTranslator(
          new FencingExceptionTranslation.Jdbc(manager.getExceptionTranslator()));
    } else if (JPA) {
      Jpa.wrapDialect(bean);
    }
    return bean;
  }

  /** Loaded only when spring-orm is present. */
  private static final class Jpa {
    static void wrapDialect(Object bean) {
      if (bean instanceof org.springframework.orm.jpa.JpaTransactionManager manager
          && !(manager.getJpaDialect() instanceof FencingJpaDialect)) {
        manager.setJpaDialect(new FencingJpaDialect(manager.getJpaDialect()));
      }
    }
  }
}
