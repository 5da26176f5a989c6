package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.jspecify.annotations.Nullable;

/** Not fenced: written freely, with or without a token. */
@Entity
@Table(name = "person")
public class Person {
  @Id
  @GeneratedValue(strategy = GenerationType.SEQUENCE)
  @Nullable Long id;

  String name = "";

  protected Person() {}

  Person(String name) {
    this.name = name;
  }
}
