package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.EntityListeners;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.jspecify.annotations.Nullable;

/** Fenced by the standard JPA callbacks too; per-row resource read through a getter. */
@Entity
@Table(name = "memo")
@Fenced(prefix = "desk:", attribute = "desk")
@EntityListeners(FencedEntityListener.class)
public class Memo {
  @Id
  @GeneratedValue(strategy = GenerationType.SEQUENCE)
  @Nullable Long id;

  private String desk = "";

  String text = "";

  protected Memo() {}

  Memo(String desk, String text) {
    this.desk = desk;
    this.text = text;
  }

  public String getDesk() {
    return desk;
  }
}
