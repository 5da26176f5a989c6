package dev.fencing.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.testing.TestDatabaseExtension;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityListeners;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.ManyToOne;
import java.util.Map;
import org.hibernate.SessionFactory;
import org.hibernate.annotations.ColumnDefault;
import org.hibernate.annotations.ColumnTransformer;
import org.hibernate.annotations.Formula;
import org.hibernate.annotations.Generated;
import org.hibernate.generator.EventType;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A wrong {@link Fenced} stops Hibernate from starting, with a message naming the entity. */
class FencedAnnotationValidationTest {
  @RegisterExtension static final TestDatabaseExtension db = new TestDatabaseExtension();

  @Entity(name = "BothValueAndAttribute")
  @Fenced(value = "ledger", attribute = "id")
  static class BothValueAndAttribute {
    @Id long id;
  }

  @Entity(name = "NeitherValueNorAttribute")
  @Fenced
  static class NeitherValueNorAttribute {
    @Id long id;
  }

  @Entity(name = "PrefixWithValue")
  @Fenced(value = "ledger", prefix = "account:")
  static class PrefixWithValue {
    @Id long id;
  }

  @Entity(name = "UnknownAttribute")
  @Fenced(prefix = "account:", attribute = "numbr")
  static class UnknownAttribute {
    @Id long id;
    long number;
  }

  @Entity(name = "AssociationAttribute")
  @Fenced(prefix = "owner:", attribute = "owner")
  static class AssociationAttribute {
    @Id long id;
    @ManyToOne @Nullable Person owner;
  }

  /**
   * The @Fenced attribute is a read-only copy of a column another attribute writes: the listener
   * would judge a write by the copy (shelf:a) while the row is written with the other's value
   * (shelf:b). Before the start-up check, a client holding shelf:a's token inserted a row of
   * shelf:b and moved a row of shelf:a to shelf:b.
   */
  @Entity(name = "ReadOnlyCopyOfAWrittenColumn")
  @Fenced(prefix = "shelf:", attribute = "ownerKey")
  static class ReadOnlyCopyOfAWrittenColumn {
    @Id long id;

    @Column(name = "owner")
    String owner = "";

    @Column(name = "owner", insertable = false, updatable = false)
    String ownerKey = "";
  }

  /** The same with the usual pair: an association writes the foreign key, an attribute reads it. */
  @Entity(name = "ReadOnlyCopyOfAForeignKey")
  @Fenced(prefix = "owner:", attribute = "ownerId")
  static class ReadOnlyCopyOfAForeignKey {
    @Id long id;

    @ManyToOne
    @JoinColumn(name = "owner_id")
    @Nullable Person owner;

    @Column(name = "owner_id", insertable = false, updatable = false)
    @Nullable Long ownerId;
  }

  /**
   * The other way round is fine: the @Fenced attribute writes the column, the association reads it.
   */
  @Entity(name = "WrittenKeyReadOnlyAssociation")
  @Fenced(prefix = "owner:", attribute = "ownerId")
  static class WrittenKeyReadOnlyAssociation {
    @Id long id;

    @ManyToOne
    @JoinColumn(name = "owner_id", insertable = false, updatable = false)
    @Nullable Person owner;

    @Column(name = "owner_id")
    @Nullable Long ownerId;
  }

  /** An attribute the insert does not write: the column gets its default, whatever it says. */
  @Entity(name = "NotInsertableAttribute")
  @Fenced(prefix = "account:", attribute = "number")
  static class NotInsertableAttribute {
    @Id long id;

    @Column(insertable = false)
    long number;
  }

  /**
   * An SQL expression writes the column: the listener judges the entity's value (burrow:ALICE), the
   * row gets another (lower: burrow:alice). Before the start-up check, the holder of burrow:ALICE
   * inserted a row of burrow:alice.
   */
  @Entity(name = "TransformedAttribute")
  @Fenced(prefix = "burrow:", attribute = "owner")
  static class TransformedAttribute {
    @Id long id;

    @ColumnTransformer(write = "lower(?)")
    String owner = "";

    TransformedAttribute() {}

    TransformedAttribute(long id, String owner) {
      this.id = id;
      this.owner = owner;
    }
  }

  /**
   * The database generates the column (its default): the insert leaves it out, so the row gets
   * alice whatever the entity says. Before the start-up check, the holder of kiln:bob persisted
   * {@code owner = "bob"} and the row read back {@code owner = 'alice'}: a row of kiln:alice
   * inserted with kiln:bob's token.
   */
  @Entity(name = "GeneratedAttribute")
  @Fenced(prefix = "kiln:", attribute = "owner")
  static class GeneratedAttribute {
    @Id long id;

    @Generated
    @ColumnDefault("'alice'")
    String owner = "";
  }

  /** The same on updates: an update leaves the column out, a trigger may set it. */
  @Entity(name = "GeneratedOnUpdateAttribute")
  @Fenced(prefix = "kiln:", attribute = "owner")
  static class GeneratedOnUpdateAttribute {
    @Id long id;

    @Generated(event = {EventType.INSERT, EventType.UPDATE})
    String owner = "";
  }

  /**
   * A value whose text is not the column's: Hibernate's default column for a BigDecimal is {@code
   * numeric(38,2)}, which stores 1.0 as 1.00 and rounds 1.005 to 1.01. Before the start-up check,
   * the holder of vat:1.005 inserted a row read back as vat:1.01 (another resource's row), and rows
   * written by the holder of vat:1 were read back as vat:1.00's.
   */
  @Entity(name = "DecimalAttribute")
  @Fenced(prefix = "vat:", attribute = "rate")
  static class DecimalAttribute {
    @Id long id;

    java.math.BigDecimal rate = java.math.BigDecimal.ONE;

    DecimalAttribute() {}

    DecimalAttribute(long id, java.math.BigDecimal rate) {
      this.id = id;
      this.rate = rate;
    }
  }

  /**
   * The same with a time zone: {@code timestamptz} keeps the instant, not the offset, so
   * 10:00+02:00 reads back as 08:00Z (and nanoseconds are rounded to microseconds).
   */
  @Entity(name = "OffsetAttribute")
  @Fenced(prefix = "slot:", attribute = "start")
  static class OffsetAttribute {
    @Id long id;

    java.time.@Nullable OffsetDateTime start;
  }

  /** A formula is never written: its value in the entity is not the row's. */
  @Entity(name = "FormulaAttribute")
  @Fenced(prefix = "account:", attribute = "number")
  static class FormulaAttribute {
    @Id long id;

    @Formula("id * 2")
    long number;
  }

  /** An attribute never updated is fine: a changed value is judged as a move (both tokens). */
  @Entity(name = "NotUpdatableAttribute")
  @Fenced(prefix = "account:", attribute = "number")
  static class NotUpdatableAttribute {
    @Id long id;

    @Column(updatable = false)
    long number;
  }

  @Entity(name = "ListenerWithoutFenced")
  @EntityListeners(FencedEntityListener.class)
  static class ListenerWithoutFenced {
    @Id long id;
  }

  @Test
  void bothValueAndAttribute() {
    assertThat(bootFailure(BothValueAndAttribute.class))
        .contains(BothValueAndAttribute.class.getName(), "exactly one of value");
  }

  @Test
  void neitherValueNorAttribute() {
    assertThat(bootFailure(NeitherValueNorAttribute.class))
        .contains(NeitherValueNorAttribute.class.getName(), "exactly one of value");
  }

  @Test
  void prefixWithValue() {
    assertThat(bootFailure(PrefixWithValue.class))
        .contains(PrefixWithValue.class.getName(), "prefix goes with attribute only");
  }

  @Test
  void unknownAttribute() {
    assertThat(bootFailure(UnknownAttribute.class))
        .contains(UnknownAttribute.class.getName(), "attribute numbr does not exist", "number");
  }

  @Test
  void associationAttribute() {
    assertThat(bootFailure(AssociationAttribute.class, Person.class))
        .contains(AssociationAttribute.class.getName(), "attribute owner is not a basic attribute");
  }

  @Test
  void readOnlyCopyOfAWrittenColumn() {
    assertThat(bootFailure(ReadOnlyCopyOfAWrittenColumn.class))
        .contains(
            ReadOnlyCopyOfAWrittenColumn.class.getName(), "attribute ownerKey is not insertable");
  }

  @Test
  void readOnlyCopyOfAForeignKey() {
    assertThat(bootFailure(ReadOnlyCopyOfAForeignKey.class, Person.class))
        .contains(ReadOnlyCopyOfAForeignKey.class.getName(), "attribute ownerId is not insertable");
  }

  @Test
  void notInsertableAttribute() {
    assertThat(bootFailure(NotInsertableAttribute.class))
        .contains(NotInsertableAttribute.class.getName(), "attribute number is not insertable");
  }

  @Test
  void formulaAttribute() {
    assertThat(bootFailure(FormulaAttribute.class))
        .contains(FormulaAttribute.class.getName(), "attribute number is not mapped to one column");
  }

  @Test
  void transformedAttribute() {
    assertThat(bootFailure(TransformedAttribute.class))
        .contains(
            TransformedAttribute.class.getName(),
            "attribute owner's column owner is written or read through an SQL expression");
  }

  @Test
  void generatedAttribute() {
    assertThat(bootFailure(GeneratedAttribute.class))
        .contains(GeneratedAttribute.class.getName(), "attribute owner's value is generated");
    assertThat(bootFailure(GeneratedOnUpdateAttribute.class))
        .contains(
            GeneratedOnUpdateAttribute.class.getName(), "attribute owner's value is generated");
  }

  @Test
  void inexactTextAttribute() {
    assertThat(bootFailure(DecimalAttribute.class))
        .contains(
            DecimalAttribute.class.getName(),
            "attribute rate's type java.math.BigDecimal may be stored as another text");
    assertThat(bootFailure(OffsetAttribute.class))
        .contains(
            OffsetAttribute.class.getName(),
            "attribute start's type java.time.OffsetDateTime may be stored as another text");
  }

  @Test
  void entityListenerWithoutFenced() {
    assertThat(bootFailure(ListenerWithoutFenced.class))
        .contains(ListenerWithoutFenced.class.getName(), "FencedEntityListener", "@Fenced");
  }

  @Test
  void validAnnotationsBoot() {
    try (SessionFactory sf =
        JpaFixture.sessionFactory(
            db.dataSource(),
            Map.of(),
            LedgerEntry.class,
            Account.class,
            Wallet.class,
            Memo.class,
            Person.class,
            WrittenKeyReadOnlyAssociation.class,
            NotUpdatableAttribute.class)) {
      assertThat(sf.isOpen()).isTrue();
    }
  }

  /** Every message in the chain of the failure to start Hibernate with {@code entities}. */
  private static String bootFailure(Class<?>... entities) {
    Throwable thrown =
        catchThrowable(
            () -> JpaFixture.sessionFactory(db.dataSource(), Map.of(), entities).close());
    assertThat(thrown).as("Hibernate must refuse to start").isNotNull();
    StringBuilder messages = new StringBuilder();
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      messages.append(t.getMessage()).append('\n');
    }
    return messages.toString();
  }
}
