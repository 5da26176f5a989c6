package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.FencedDataSource;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.HierarchicalBeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.SingletonBeanRegistry;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;

/**
 * Wraps every {@code DataSource} bean in a {@link FencedDataSource} once it is initialized (its
 * {@code spring.datasource.*} settings bound), and remembers what it wrapped: the lease client and
 * the migrations use the pool itself, whose SQL needs no token. Boot's {@code DataSourceUnwrapper}
 * (Hikari metrics, JMX, health) still reaches the pool through {@code unwrap}/{@code isWrapperFor}.
 *
 * <p>A bean named in {@code fencing.datasource.resources} checks only the resources listed for it.
 * A name there that is no {@code DataSource} bean fails start-up when the first one is wrapped,
 * before the fence's migrations could run.
 *
 * <p>A {@code DataSource} bean created before this post-processor was registered (an ordered
 * post-processor of the application, or a bean one needs, depends on it) is never wrapped, and its
 * connections would carry no token: start-up fails naming it ({@link #requireFenced}), at the
 * fence's migrations (before the application's Flyway and JPA use it) and once all singletons
 * exist. So does one of a parent context that this context uses: no post-processor of this context
 * sees another context's beans. And one of a child context that has no fencing of its own, when the
 * child's refresh completes (its {@code ContextRefreshedEvent} reaches this context): auto-
 * configuration runs per context, so no post-processor wraps the child's beans. And a {@code
 * JdbcTemplate}, transaction manager or {@code EntityManagerFactory} bean over a data source that
 * is neither fenced nor a bean ({@link DataSourceUsers}), as it is created: no post-processor wraps
 * a data source built in place.
 */
final class FencingDataSourcePostProcessor
    implements BeanPostProcessor,
        Ordered,
        BeanFactoryAware,
        SmartInitializingSingleton,
        ApplicationListener<ContextRefreshedEvent> {
  private static final Logger LOG = LoggerFactory.getLogger(FencingDataSourcePostProcessor.class);
  // why a DataSource bean is not fenced, and what to do (requireFenced)
  private static final String EARLY =
      "it was created before fencing's BeanPostProcessor was registered (an ordered"
          + " BeanPostProcessor, or a bean one needs, depends on it; Spring logged that it is not"
          + " eligible for getting processed by all BeanPostProcessors)";
  private static final String EARLY_REMEDY =
      "Let that post-processor take an ObjectProvider<DataSource> (or a @Lazy one)";
  private static final String PARENT =
      "it belongs to a parent context, whose beans this context's fencing post-processor cannot"
          + " wrap, and this context uses it";
  private static final String PARENT_REMEDY =
      "Enable fencing in the parent context too (its auto-configuration wraps it there)";
  private static final String CHILD =
      "it belongs to a child context that has no fencing of its own (auto-configuration runs per"
          + " context: the parent's fencing post-processor cannot wrap the child's beans)";
  private static final String CHILD_REMEDY =
      "Enable fencing in the child context too (its auto-configuration wraps it there)";

  private final ObjectProvider<FencingProperties> properties;
  private final ObjectProvider<FencingMeters> metrics;
  private final Map<DataSource, DataSource> unfenced =
      Collections.synchronizedMap(new IdentityHashMap<>());
  private @Nullable ListableBeanFactory beanFactory;
  private volatile boolean placementChecked;

  FencingDataSourcePostProcessor(
      ObjectProvider<FencingProperties> properties, ObjectProvider<FencingMeters> metrics) {
    this.properties = properties;
    this.metrics = metrics;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (!(bean instanceof DataSource dataSource)) {
      requireFencedUser(bean, beanName);
      return bean;
    }
    FencingProperties config = properties.getObject();
    if (!config.datasource().exclude().contains(beanName)) {
      requireUniformRouting(beanName, dataSource);
    }
    if (isFenced(dataSource)) {
      return bean;
    }
    if (!placementChecked) {
      checkPlacedBeansExist(config);
      placementChecked = true;
    }
    if (config.datasource().exclude().contains(beanName)) {
      LOG.info("DataSource bean {} is not fenced (fencing.datasource.exclude)", beanName);
      return bean;
    }
    FencedDataSource.Builder builder =
        FencedDataSource.builder(dataSource)
            .schema(config.schema())
            .requireToken(config.datasource().requireToken())
            .recordRejections(config.datasource().recordRejections());
    List<String> resources = config.datasource().resources().get(beanName);
    if (resources != null) {
      builder.resources(ResourcePlacement.of(resources));
    }
    FencingMeters registry = metrics.getIfAvailable();
    if (registry != null) {
      builder.meterRegistry(registry.registry());
    }
    FencedDataSource fenced = builder.build();
    unfenced.put(fenced, dataSource);
    LOG.debug("DataSource bean {} is fenced", beanName);
    return fenced;
  }

  /**
   * Fails if {@code bean} (a {@code JdbcTemplate}, a transaction manager, ...: {@link
   * DataSourceUsers}) writes through a data source that is not fenced and is no {@code DataSource}
   * bean: one built in place (a second database's pool, {@code
   * properties.initializeDataSourceBuilder().build()}), or a pool unwrapped from a fenced bean. No
   * post-processor wraps it, so the bean's writes would carry no token. A {@code DataSource} bean
   * is judged as a bean ({@link #requireFenced}), also behind Spring's own proxies of it ({@code
   * TransactionAwareDataSourceProxy}, {@code LazyConnectionDataSourceProxy}); the bean itself, or
   * the data source's, in {@code fencing.datasource.exclude} is left alone.
   *
   * @throws IllegalStateException naming the bean
   */
  private void requireFencedUser(Object bean, String beanName) {
    DataSource used = DataSourceUsers.dataSourceOf(bean);
    // through Spring's own proxies (TransactionAwareDataSourceProxy, LazyConnectionDataSourceProxy:
    // built in place, over a bean), which write through their target: a bean there is judged (or
    // excluded) as that bean
    for (DataSource d = used; d != null; d = DataSourceUsers.targetOf(d)) {
      if (isFenced(d) || isBean(d, DataSource.class)) {
        return;
      }
    }
    if (used == null) {
      return;
    }
    if (bean instanceof NamedParameterJdbcTemplate named
        && isBean(named.getJdbcTemplate(), JdbcTemplate.class)) {
      return; // over a JdbcTemplate bean, judged (or excluded) as that bean
    }
    if (properties.getObject().datasource().exclude().contains(beanName)) {
      LOG.info(
          "{} bean {} uses a DataSource that is not fenced (fencing.datasource.exclude)",
          bean.getClass().getSimpleName(),
          beanName);
      return;
    }
    throw new IllegalStateException(
        bean.getClass().getSimpleName()
            + " bean "
            + beanName
            + " uses a DataSource ("
            + used.getClass().getName()
            + ") that is not fenced: it is no DataSource bean (fencing wraps DataSource beans), so"
            + " its connections would carry no fencing token. Make that DataSource a bean (it is"
            + " then fenced), or list "
            + beanName
            + " in fencing.datasource.exclude");
  }

  /** Whether {@code instance} is a bean of {@code type} of this context or its parents. */
  private boolean isBean(Object instance, Class<?> type) {
    for (BeanFactory f = beanFactory; f != null; f = parentOf(f)) {
      if (f instanceof ListableBeanFactory factory && f instanceof SingletonBeanRegistry registry) {
        for (String name : factory.getBeanNamesForType(type, true, false)) {
          if (registry.containsSingleton(name) && factory.getBean(name) == instance) {
            return true;
          }
        }
      }
    }
    return false;
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    if (beanFactory instanceof ListableBeanFactory listable) {
      this.beanFactory = listable;
    }
  }

  /** A bean name in {@code fencing.datasource.resources} must be a {@code DataSource} bean's. */
  private void checkPlacedBeansExist(FencingProperties config) {
    ListableBeanFactory factory = beanFactory;
    if (factory == null || config.datasource().resources().isEmpty()) {
      return;
    }
    Set<String> dataSources =
        new TreeSet<>(Arrays.asList(factory.getBeanNamesForType(DataSource.class, true, false)));
    for (String bean : config.datasource().resources().keySet()) {
      if (!dataSources.contains(bean)) {
        throw new IllegalStateException(
            "fencing.datasource.resources."
                + bean
                + " names no DataSource bean (the DataSource beans: "
                + dataSources
                + ")");
      }
    }
  }

  @Override
  public void afterSingletonsInstantiated() {
    requireFenced();
  }

  /**
   * Fails if a {@code DataSource} singleton that exists and is not excluded is not fenced: it was
   * created before this post-processor was registered, so it was never wrapped (one created later
   * is wrapped, so only those that exist are looked at, and none is created here); or it belongs to
   * a parent context (SpringApplicationBuilder's {@code parent}), whose beans no post-processor of
   * this context sees, while this context's beans (a {@code JdbcTemplate}, the lease client) use
   * it; a lazy singleton of such a parent is created here, since this context's first use would
   * create it bare, after start-up, and so is one instance of a prototype (or other scope) of such
   * a parent, every instance of which the parent creates bare. A parent with its own fencing
   * post-processor is left to it (its beans are wrapped there, and one it excludes stays excluded),
   * and so are its ancestors, which its own start checked.
   *
   * @throws IllegalStateException naming the bean
   */
  void requireFenced() {
    FencingProperties config = properties.getObject();
    boolean parent = false;
    for (BeanFactory f = beanFactory; f != null; f = parentOf(f)) {
      if (parent
          && f instanceof ListableBeanFactory factory
          && factory.getBeanNamesForType(FencingDataSourcePostProcessor.class, true, false).length
              > 0) {
        // a parent that fences with its own post-processor: its beans are wrapped there, its
        // fencing.datasource.exclude is its own decision, and its own start checked the rest
        return;
      }
      if (f instanceof ListableBeanFactory factory && f instanceof SingletonBeanRegistry registry) {
        for (String name : factory.getBeanNamesForType(DataSource.class, true, false)) {
          // one of this context not created yet will be wrapped when it is (a prototype's every
          // instance is); one of a parent (lazy or prototype there) would not be: it is judged
          if (config.datasource().exclude().contains(name)
              || (!parent && (!registry.containsSingleton(name) || !factory.isSingleton(name)))) {
            continue;
          }
          judge(factory, name, parent ? PARENT : EARLY, parent ? PARENT_REMEDY : EARLY_REMEDY);
        }
      }
      parent = true;
    }
  }

  /**
   * Judges the {@code DataSource} beans of a descendant context when its refresh completes (events
   * reach the parents), unless it or a context between it and this one has a fencing post-processor
   * of its own (which wraps and judges them there): no post-processor of this context sees them.
   * Every bean that is not excluded is judged: a singleton not created yet (lazy) and an instance
   * of a prototype are created to be.
   *
   * @throws IllegalStateException naming the bean, which fails the child's refresh
   */
  @Override
  public void onApplicationEvent(ContextRefreshedEvent event) {
    if (!(event.getApplicationContext() instanceof ConfigurableApplicationContext context)
        || context.getBeanFactory() == beanFactory) {
      return; // this context's own refresh: requireFenced judged it
    }
    for (BeanFactory f = context.getBeanFactory(); f != null && f != beanFactory; f = parentOf(f)) {
      if (f instanceof ListableBeanFactory factory
          && factory.getBeanNamesForType(FencingDataSourcePostProcessor.class, true, false).length
              > 0) {
        return;
      }
    }
    FencingProperties config = properties.getObject();
    ListableBeanFactory child = context.getBeanFactory();
    for (String name : child.getBeanNamesForType(DataSource.class, true, false)) {
      if (!config.datasource().exclude().contains(name)) {
        judge(child, name, CHILD, CHILD_REMEDY);
      }
    }
  }

  /**
   * Fails unless bean {@code name} of {@code factory} (another context's, or one created before
   * this post-processor) is fenced. A singleton is created if it does not exist yet; a prototype
   * (each use creates a new one there, never wrapped) has one instance created to be judged,
   * destroyed again; a bean of another scope is judged in the instance its scope keeps, which is
   * left to the scope (its users share it).
   */
  private static void judge(ListableBeanFactory factory, String name, String why, String remedy) {
    boolean singleton = factory.isSingleton(name);
    DataSource dataSource;
    try {
      dataSource = factory.getBean(name, DataSource.class);
    } catch (BeansException e) {
      if (singleton) {
        throw e;
      }
      throw new IllegalStateException(
          "DataSource bean "
              + name
              + " is not a singleton and no instance of it could be created to judge whether it is"
              + " fenced: "
              + why
              + ". "
              + remedy
              + ", or list the bean in fencing.datasource.exclude",
          e);
    }
    boolean fenced = isFenced(dataSource);
    // a prototype's instance is this judging's own; one of another scope (thread, refresh,
    // session) is the one the scope keeps and its users share: the scope ends it, not this
    if (factory.isPrototype(name) && factory instanceof ConfigurableBeanFactory configurable) {
      configurable.destroyBean(name, dataSource);
    }
    if (!fenced) {
      throw new IllegalStateException(
          "DataSource bean "
              + name
              + " ("
              + dataSource.getClass().getName()
              + (singleton ? "" : ", prototype or other non-singleton scope: every use creates one")
              + ") is not fenced: "
              + why
              + ", so its connections would carry no fencing token. "
              + remedy
              + ", or list the bean in fencing.datasource.exclude");
    }
  }

  private static @Nullable BeanFactory parentOf(BeanFactory factory) {
    return factory instanceof HierarchicalBeanFactory h ? h.getParentBeanFactory() : null;
  }

  /**
   * A routing data source answers {@code isWrapperFor} for its current target only (the default one
   * at start-up), so one whose targets are fenced for some keys and not for others would either be
   * left unwrapped (its unfenced keys carrying no token) or wrap the fenced ones twice: refused.
   *
   * @throws IllegalStateException naming the bean and the keys
   */
  private static void requireUniformRouting(String beanName, DataSource dataSource) {
    if (!(dataSource instanceof AbstractRoutingDataSource router)) {
      return;
    }
    Map<Object, DataSource> targets;
    try {
      targets = router.getResolvedDataSources();
    } catch (IllegalStateException e) {
      return; // not resolved yet: isWrapperFor cannot answer either, so the router is wrapped
    }
    Set<String> fenced = new TreeSet<>();
    Set<String> unfenced = new TreeSet<>();
    for (Map.Entry<Object, DataSource> target : targets.entrySet()) {
      (isFenced(target.getValue()) ? fenced : unfenced).add(String.valueOf(target.getKey()));
    }
    DataSource fallback = router.getResolvedDefaultDataSource();
    if (fallback != null) {
      (isFenced(fallback) ? fenced : unfenced).add("(default)");
    }
    if (!fenced.isEmpty() && !unfenced.isEmpty()) {
      throw new IllegalStateException(
          "routing DataSource bean "
              + beanName
              + " routes to fenced targets "
              + fenced
              + " and to targets that are not fenced "
              + unfenced
              + ": writes through the latter would carry no fencing token. Make every target a"
              + " DataSource bean (each is fenced), or none (the router is fenced as a whole)");
    }
  }

  /**
   * The pool under {@code dataSource} if this post-processor fenced it, also when a later
   * post-processor decorated the fenced one (datasource-proxy, tracing: {@code
   * Decorator(FencedDataSource(pool))}, reached through {@code unwrap}); else {@code dataSource}
   * itself.
   */
  DataSource unfenced(DataSource dataSource) {
    DataSource target = unfenced.get(dataSource);
    if (target != null) {
      return target;
    }
    try {
      if (dataSource.isWrapperFor(FencedDataSource.class)) {
        target = unfenced.get(dataSource.unwrap(FencedDataSource.class));
      }
    } catch (SQLException | RuntimeException e) {
      LOG.debug("Could not unwrap DataSource {} to a FencedDataSource", dataSource, e);
    }
    return target == null ? dataSource : target;
  }

  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE - 10;
  }

  private static boolean isFenced(DataSource dataSource) {
    if (dataSource instanceof FencedDataSource) {
      return true;
    }
    try {
      return dataSource.isWrapperFor(FencedDataSource.class);
    } catch (SQLException | RuntimeException e) {
      return false;
    }
  }
}
