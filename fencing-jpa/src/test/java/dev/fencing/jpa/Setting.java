package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** An assigned id, so a StatelessSession can upsert it. */
@Entity
@Table(name = "setting")
@Fenced("config")
public class Setting {
  @Id String name = "";

  String value = "";

  protected Setting() {}

  Setting(String name, String value) {
    this.name = name;
    this.value = value;
  }
}
